"""Probes derived from a world's surface and operator signatures.

One generator serves three users: the fixed-probe condition (a seeded stream),
certification (Hypothesis searching for a probe that tells a rule apart), and
property tests. It is written against a small `Chooser`, so the same code
draws from `random.Random` or from Hypothesis' `data.draw`.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import attrs

from worldspec import ast
from worldspec.safejson import outside_strings

INDENT = "    "


def _one_argument(text: str) -> bool:
    """Whether an argument list holds a single expression (no top-level comma)."""
    depth = 0
    for ch in outside_strings(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            return False
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
        # imported here: a run never draws through Hypothesis, and importing it costs every
        # process that loads a program world (a sandbox worker, `worldspec run`) about 0.1 s
        from hypothesis import strategies
        self.draw = draw
        self.integers = strategies.integers

    def int(self, lo: int, hi: int) -> int:
        """An integer in lo..hi, drawn by Hypothesis."""
        return self.draw(self.integers(lo, hi))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,15}$")
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Hooks whose probes build their own loops and functions (the context shapes them, not a wrapper).
_STRUCTURAL = ("jump", "passes", "for_many", "arguments", "returned", "no_return")


def _strings(e) -> set[str]:
    """The string constants of an expression (where a rule keys on a name, the name is one of them)."""
    found, todo = set(), [e]
    while todo:
        x = todo.pop()
        if isinstance(x, ast.Const):
            if type(x.value) is str:
                found.add(x.value)
        elif isinstance(x, ast.Expr):
            todo += [getattr(x, f.name) for f in attrs.fields(type(x)) if f.name != "span"]
        elif isinstance(x, tuple):
            todo += list(x)
    return found


def quote(text: str) -> str:
    """A string literal of a program that denotes text (the escapes \\n, \\t, \\" and \\\\)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


class ProbeGenerator:
    """Probes for one world, built from its surface and its base operators' signatures."""

    def __init__(self, world, mine_rules: bool = False):
        """`mine_rules`: also write the string constants of the perturbed rules' bodies (certification
        knows the truth; a fixed-probe agent must not, so the world's public generator leaves it off)."""
        self.world = world
        self.surface = world.surface
        self.base = world.builder.base  # target -> Definition
        self.ops = [d for d in self.base.values() if d.kind == "op"]
        self.by_return: dict[str, list] = {}
        for d in self.ops:
            if not any(p.type.name == "fn" for p in d.params):
                self.by_return.setdefault(d.returns.name, []).append(d)
        self.mutating = [d for d in self.ops if d.mutates]
        w = self.surface.word
        self.out = w("output")
        taken = set(self.surface.keywords) | {d.name for d in self.ops} | {"w9", "w8", "g0", "g1", "g2"}
        mined = set().union(*(_strings(r.override.body) for r in world.builder.rules.values())) if mine_rules \
            else set()
        # names a rule may key on (its string constants), then every letter: a rule on names that
        # start with a letter the author picked is seen whichever letter that is
        self.names = [n for n in sorted(mined) if _NAME.match(n) and n not in taken]
        self.quoted = [quote(m) for m in sorted(mined) if len(m) <= 20 and all(c.isprintable() or c in "\t\n" for c in m)]
        self.taken = taken

    def name(self, ch: Chooser, avoid: tuple[str, ...] = ()) -> str:
        """A variable name for a probe: x, a name a rule mentions, or a random letter's name."""
        pick = ch.int(0, 9)
        if pick < 4 or (pick < 7 and not self.names):
            name = "x"
        elif pick < 7:
            name = ch.choice(self.names)
        else:
            name = ch.choice(_LETTERS) + ch.choice(("", "", "1", "z", "_v"))
        return name if name not in self.taken and name not in avoid else "x" if "x" not in avoid else "y"

    # ------------------------------------------------------------ values

    def literal(self, ch: Chooser, type_name: str) -> str:
        """A literal of the type, in the world's spelling."""
        if type_name == "int":
            return str(ch.choice((0, 1, 2, 3, -1, 5, 10)) if ch.chance(0.5) else ch.int(-20, 120))
        if type_name == "str":
            if self.quoted and ch.chance(0.15):  # a string a rule mentions
                return ch.choice(self.quoted)
            n = ch.int(0, 5)
            letters = "abcdef" if ch.chance(0.6) else ("a", "b", "C", " ", "\\t", "\\n", '\\"', "\\\\")
            return '"' + "".join(ch.choice(letters) for _ in range(n)) + '"'
        if type_name == "bool":
            return self.surface.word("true") if ch.chance(0.5) else self.surface.word("false")
        if type_name == "float":
            return f"{ch.int(-20, 120)}.{ch.choice(('5', '25', '1', '0', '75'))}"
        return self.literal(ch, ch.choice(("int", "int", "str", "bool")))

    def list_expr(self, ch: Chooser, depth: int, n: int | None = None, item: str = "int") -> str | None:
        """A list: a call of a variadic list-making operator, or a list literal (None when the world
        has neither)."""
        count = ch.int(0, 5) if n is None else n
        makers = [d for d in self.by_return.get("list", ()) if d.params and d.params[-1].variadic]
        items = ", ".join(self.expr(ch, item, depth + 1) for _ in range(count))
        if makers and not (self.surface.has("list") and ch.chance(0.3)):
            return f"{ch.choice(makers).name}({items})"
        return f"[{items}]" if self.surface.has("list") else None

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
        if type_name == "float" and not self.surface.has("float"):
            type_name = "int"
        return self.literal(ch, type_name)

    def call(self, ch: Chooser, d: ast.Definition, depth: int = 0, fixed: dict | None = None) -> str:
        """A call of one operator with arguments of its parameters' types (`fixed`: position -> text)."""
        args: list[str] = []
        seen: dict[str, str] = {}
        # Equal or case-swapped arguments are where comparison rules show.
        echo = ch.chance(0.3)
        for k, p in enumerate(d.params):
            if fixed and k in fixed:
                args.append(fixed[k])
            elif p.variadic:
                args += [self.expr(ch, p.type.name, depth + 1) for _ in range(ch.int(0, 4))]
            elif p.default is not None and ch.chance(0.4):
                break  # leave the optional parameters out
            elif p.type.name == "fn":
                args.append("g1")
            elif echo and p.type.name in seen:
                prev = seen[p.type.name]
                swap = prev.startswith('"') and "\\" not in prev and ch.chance(0.5)
                args.append(prev.swapcase() if swap else prev)
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
            lines = body
            for var in ("w9", "w8")[:ch.int(1, 2)]:  # one loop, or two nested (loop_depth 2)
                seq = self.list_expr(ch, 2, n=ch.int(1, 3)) or '"ab"'
                lines = [s.render("for", name=var, expr=seq)] + [INDENT + b for b in lines]
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

    def body_for(self, ch: Chooser, target: str, context: str = "top") -> tuple[list[str], bool]:
        """Statements that exercise one target ("op NAME" / "hook NAME")."""
        s, out = self.surface, self.out
        kind, name = target.split(" ", 1)
        if kind == "op":
            d = self.base[target]
            needs_fn = any(p.type.name == "fn" for p in d.params)
            if d.mutates and ch.chance(0.5):
                return self._mutation(ch, d), needs_fn
            return [f"{out}({self.call(ch, d)})"], needs_fn
        if name == "int_literal":
            return [f"{out}({self.literal(ch, 'int')})"], False
        if name == "str_literal":
            return [f"{out}({self.literal(ch, 'str')})"], False
        if name == "float_literal" and s.has("float"):
            return [f"{out}({self.literal(ch, 'float')})"], False
        if name == "list_literal" and s.has("list"):
            return [f"{out}([{', '.join(self.expr(ch, 'any', 1) for _ in range(ch.int(0, 3)))}])"], False
        if name == "truthy":
            cond = self.expr(ch, "any")
            return [s.render("if", expr=cond), INDENT + f"{out}(1)", s.render("else"), INDENT + f"{out}(0)"], False
        if name == "iterate":
            seq = self.expr(ch, ch.choice(("list", "list", "str")))
            return [s.render("for", name="v", expr=seq), INDENT + f"{out}(v)"], False
        if name in ("assign", "lookup"):
            var = self.name(ch)
            return [s.render("assign", name=var, expr=self.expr(ch, "any")), f"{out}({var})"], False
        if name == "index" and s.has("index"):
            return [f"{out}({self.expr(ch, 'list')}[{self.expr(ch, 'int')}])"], False
        if name == "position" and s.has("index"):  # a written position: read, or a slice's bounds
            if ch.chance(0.5):
                return [f"{out}({self.expr(ch, 'list')}[{self.expr(ch, 'int')}])"], False
            return [f"{out}({self.expr(ch, 'list')}[{self.expr(ch, 'int')}:{self.expr(ch, 'int')}])"], False
        if name == "loop_else" and s.has("loop_else"):  # a loop that may break, and its else block
            breaks = s.has("break") and ch.chance(0.6)
            stop = [INDENT + s.word("break")] if breaks else [INDENT + s.render("assign", name="z1", expr="0")]
            if s.has("while") and s.has("break") and ch.chance(0.4):  # entered (and left by its break) or not
                cond = s.word("true") if ch.chance(0.5) else s.word("false")
                head, stop = s.render("while", expr=cond), [INDENT + s.word("break")]
            else:
                head = s.render("for", name="v", expr=self.list_expr(ch, 1, n=ch.int(0, 3)) or '"ab"')
            return [head, *stop, s.word("loop_else"), INDENT + f"{out}(1)"], False
        if name == "slice" and s.has("index"):
            return [f"{out}({self.expr(ch, 'list')}[{self.expr(ch, 'int')}:{self.expr(ch, 'int')}])"], False
        if name in ("branch_order", "else_runs"):
            return self._branches(ch), False
        if name == "update" and self.mutating:
            return self._mutation(ch, ch.choice(self.mutating)), False
        if name == "set_index" and s.has("set_index"):
            var = self.name(ch)
            n = ch.int(1, 4)
            seq = self.list_expr(ch, 1, n=n) or '"ab"'
            at = self.literal(ch, "int") if ch.chance(0.2) else str(ch.int(-1, n))
            return [s.render("assign", name=var, expr=seq),
                    s.render("set_index", name=var, index=at, expr=self.expr(ch, "any", 1)), f"{out}({var})"], False
        if name == "assign_many" and s.has("assign_many"):
            a, b = self.name(ch), "b1"
            values = (f"{self.expr(ch, 'any', 1)}, {self.expr(ch, 'any', 1)}" if ch.chance(0.7)
                      else self.list_expr(ch, 1, n=2) or "1, 2")
            return [s.render("assign_many", names=f"{a}, {b}", exprs=values), f"{out}({a}, {b})"], False
        if name in _STRUCTURAL:
            return self._structural(ch, name, context), False
        # show, output and anything else: print values of every kind
        n = ch.int(1, 2)
        return [f"{out}({', '.join(self.expr(ch, 'any') for _ in range(n))})"], False

    def _mutation(self, ch: Chooser, d: ast.Definition) -> list[str]:
        """A mutating operator on a line of its own, updating a variable, which is then printed."""
        var = self.name(ch)
        p = d.params[[q.name for q in d.params].index(d.mutates)]
        start = self.expr(ch, p.type.name if p.type.name != "any" else "list")
        k = [q.name for q in d.params].index(d.mutates)
        return [self.surface.render("assign", name=var, expr=start), self.call(ch, d, fixed={k: var}),
                f"{self.out}({var})"]

    def _branches(self, ch: Chooser) -> list[str]:
        """An if with elifs and an else, each branch printing its own mark."""
        s, out = self.surface, self.out
        lines = [s.render("if", expr=self.cond(ch)), INDENT + f"{out}(\"a\")"]
        if s.has("elif"):
            for mark in "bc"[:ch.choice((0, 1, 2, 2))]:
                lines += [s.render("elif", expr=self.cond(ch)), INDENT + f"{out}(\"{mark}\")"]
        if ch.chance(0.8):
            lines += [s.render("else"), INDENT + f"{out}(\"d\")"]
        return lines

    def cond(self, ch: Chooser) -> str:
        """A condition: mostly the world's true and false, sometimes any value."""
        pick = ch.int(0, 9)
        if pick < 8:
            return self.surface.word("true") if pick < 5 else self.surface.word("false")
        return self.expr(ch, "any", 1)

    def _structural(self, ch: Chooser, hook: str, context: str) -> list[str]:
        """Loops and functions whose shape is what the hook changes (break and continue, the number
        of passes, unpacking, argument passing, return values), in the requested context."""
        s, out = self.surface, self.out
        seq = self.list_expr(ch, 1, n=ch.int(0, 5)) or '"abc"'
        outer = context == "loop"
        if hook in ("arguments", "returned", "no_return") and s.has("function"):
            n = ch.int(1, 3)
            params = ", ".join(f"p{i}" for i in range(n))
            body = [INDENT + f"p{ch.int(0, n - 1)}"] if hook != "returned" or ch.chance(0.3) else []
            if s.has("return") and (hook != "no_return" or ch.chance(0.3)):
                body.append(INDENT + s.render("return", expr=f"p{ch.int(0, n - 1)}" if ch.chance(0.8) else "").rstrip())
            args = ", ".join(self.expr(ch, "any", 1) for _ in range(n))
            return [s.render("function", name="g2", params=params), *(body or [INDENT + "p0"]),
                    f"{out}(g2({args}))"]
        if hook == "for_many" and s.has("for_many"):
            pairs = [self.list_expr(ch, 2, n=2) for _ in range(ch.int(1, 3))]
            maker = next((d for d in self.by_return.get("list", ()) if d.params and d.params[-1].variadic), None)
            if None not in pairs and (maker is not None or s.has("list")):
                listed = ", ".join(pairs)
                whole = f"[{listed}]" if maker is None or (s.has("list") and ch.chance(0.5)) else \
                    f"{maker.name}({listed})"
                return [s.render("assign", name="t1", expr="0"), s.render("assign", name="t2", expr="0"),
                        s.render("for_many", names="a1, b1", expr=whole),
                        INDENT + s.render("assign", name="t1", expr="a1"),
                        INDENT + s.render("assign", name="t2", expr="b1"), f"{out}(t1, t2)"]
        if hook == "passes" and ch.chance(0.4) and s.has("while"):
            t, f = s.word("true"), s.word("false")
            lines = [s.render("assign", name="k1", expr=t), s.render("while", expr="k1"),
                     INDENT + f"{out}(1)", INDENT + s.render("assign", name="k1", expr=f)]
        elif hook == "passes":
            lines = [s.render("for", name="v", expr=seq), INDENT + f"{out}(v)"]
        else:  # jump: remember the element before and after the jump, and print both once the loop ends
            word = ch.choice([w for w in ("break", "continue") if s.has(w)] or ["break"])
            inner = [s.render("for", name="v", expr=seq), INDENT + s.render("assign", name="y1", expr="v"),
                     INDENT + s.word(word), INDENT + s.render("assign", name="x1", expr="v")]
            if not s.has(word):
                inner = inner[:2]
            lines = inner
            if outer:
                lines = [s.render("for", name="w9", expr=self.list_expr(ch, 2, n=ch.int(1, 2)) or '"a"')]
                lines += [INDENT + b for b in inner]
            zero = s.word("none") if s.has("none") else "0"
            return [s.render("assign", name="x1", expr=zero), s.render("assign", name="y1", expr=zero), *lines,
                    f"{out}(x1, y1)"]
        if outer:
            lines = [s.render("for", name="w9", expr=self.list_expr(ch, 2, n=1) or '"a"')] + [INDENT + b for b in lines]
        return lines

    def probe_for(self, ch: Chooser, target: str, context: str | None = None) -> str:
        """A probe exercising one target in a context (top level, loop or function)."""
        context = context or ch.choice(("top", "top", "loop", "function"))
        body, needs_fn = self.body_for(ch, target, context)
        if target.split(" ", 1)[1] in _STRUCTURAL and context == "loop":
            context = "top"  # the probe built its own loops
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
