"""The explorer's hypothesis space: the manual's base lines under generic perturbation families.

The space is built from a world's base lines only (`builder.base`: what the manual
documents), never from its perturbed rules or parameters. Families are read from
the bundled `families.spec` (and a world's own `NAME.families` beside its file):
each family is a meta-language template over the base body, expanded here into
concrete bodies, compiled once, and merged when two behave alike on sampled
arguments in every scope. Every hypothesis can be stated in the equation notation.
"""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import attrs

from worldspec import ast
from worldspec.compiler.program.values_gen import curated_values, values_for
from worldspec.diagnostics import SpecError
from worldspec.meta import MetaCompiler
from worldspec.parser import parse_expr
from worldspec.values import Ctx, EvalError

FAMILIES_FILE = Path(__file__).with_name("families.spec")
BASE_WEIGHT = 0.3  # prior mass of the manual's own line; the families share the rest
SAMPLES = 36  # argument lists per behaviour fingerprint
SHORT = 6  # of which the first few make the quick key
SCOPES = ("top", "in_function", "in_loop")
_SPECIAL = ("base", "base_with", "base_with_all", "replace_op", "shift_const")


class FamilyError(ValueError):
    """A families file that cannot be read."""


@attrs.frozen
class Family:
    """One perturbation family as the families file states it."""

    name: str
    bodies: tuple[ast.Expr, ...]
    on: str = ""  # "op" | "hook" | "" (both)
    returns: tuple[str, ...] = ()  # allowed return types ("" = any)
    param: tuple[str, ...] = ()  # P's allowed types (empty: no P)
    param2: tuple[str, ...] = ()  # Q's allowed types (empty: no Q)
    consts: tuple[int, ...] = ()  # C's values (empty: no C)
    words: tuple[str, ...] = ()  # S's values, strings (empty: no S)
    weight: float = 1.0
    scopes: tuple[str, ...] = ("top",)


@attrs.frozen(eq=False)
class Hypothesis:
    """One candidate definition of one base line."""

    id: str  # "op PLUCK|argument_offset|i,-1|top"
    target: str  # "op PLUCK"
    family: str  # "base" for the manual's line
    body: ast.Expr  # over the base line's parameter names
    params: tuple[str, ...]
    weight: float  # prior
    unit: object = attrs.field(repr=False)  # compiled body (meta.Unit)

    @property
    def is_base(self) -> bool:
        return self.family == "base"

    @property
    def equation(self) -> str:
        """The body in the equation notation of rule reports."""
        return sexpr(self.body)

    def line(self) -> str:
        """The rule-report line stating this hypothesis."""
        kind, name = self.target.split(" ", 1)
        return f"{kind} {name}({', '.join(self.params)}) = {self.equation}"


# ---------------------------------------------------------------- the families file


def _types(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split("|") if t.strip())


def _consts(text: str) -> tuple[int, ...]:
    text = text.strip()
    if ".." in text and "," not in text:
        lo, hi = (int(x) for x in text.split(".."))
        return tuple(c for c in range(lo, hi + 1) if c != 0)
    return tuple(int(x) for x in text.split(","))


def read_families(text: str, file: str = "<families>") -> tuple[Family, ...]:
    """Parse a families file (the format is described at the top of families.spec)."""
    out, cur = [], None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("body") else raw.rstrip()
        if not line.strip():
            continue
        key, _, rest = line.strip().partition(" ")
        try:
            if key == "family":
                cur = {"name": rest.strip(), "bodies": []}
                out.append(cur)
            elif cur is None:
                raise FamilyError("a family line must come first")
            elif key == "body":
                cur["bodies"].append(parse_expr(rest.strip(), f"{file}:{n}"))
            elif key in ("on",):
                cur["on"] = rest.strip()
            elif key in ("returns", "param", "param2"):
                cur[key] = _types(rest)
            elif key == "const":
                cur["consts"] = _consts(rest)
            elif key == "words":
                cur["words"] = tuple(w.strip() for w in rest.split(",") if w.strip())
            elif key == "weight":
                cur["weight"] = float(rest)
            elif key == "scopes":
                cur["scopes"] = tuple(rest.split())
                if not set(cur["scopes"]) <= set(SCOPES):
                    raise FamilyError(f"scopes are {', '.join(SCOPES)}")
            else:
                raise FamilyError(f"unknown key {key!r}")
        except (SpecError, ValueError) as e:
            raise FamilyError(f"{file}:{n}: {e}") from None
    return tuple(Family(**{**f, "bodies": tuple(f["bodies"])}) for f in out)


def families_for(world) -> tuple[Family, ...]:
    """The bundled families, plus the world's own `NAME.families` file when it has one."""
    fams = read_families(FAMILIES_FILE.read_text(), str(FAMILIES_FILE))
    source = getattr(world, "source", "") or ""
    extra = Path(source).with_suffix(".families") if source.endswith(".world") else None
    if extra is not None and extra.is_file():
        fams += read_families(extra.read_text(), str(extra))
    return fams


# ---------------------------------------------------------------- AST helpers


def substitute(e, mapping: dict):
    """e with the free variables named in mapping replaced (lambda parameters shadow)."""
    if isinstance(e, ast.Var):
        return mapping.get(e.name, e)
    if isinstance(e, ast.Lambda):
        inner = {k: v for k, v in mapping.items() if k not in e.params}
        return attrs.evolve(e, body=substitute(e.body, inner))
    if isinstance(e, ast.Let):
        inner = {k: v for k, v in mapping.items() if k != e.name}
        return attrs.evolve(e, value=substitute(e.value, mapping), body=substitute(e.body, inner))
    if isinstance(e, ast.Expr):
        return attrs.evolve(e, **{f.name: substitute(getattr(e, f.name), mapping)
                                  for f in attrs.fields(type(e)) if f.name != "span"})
    if isinstance(e, tuple):
        return tuple(substitute(x, mapping) for x in e)
    return e


def replace_operator(e, old: str, new: str) -> tuple[object, bool]:
    """e with every infix `old` replaced by `new` (and/or count as infix); whether any was."""
    found = False

    def go(x):
        nonlocal found
        if isinstance(x, ast.BinOp) and x.op == old:
            found = True
            return ast.BinOp(new, go(x.left), go(x.right))
        if isinstance(x, (ast.And, ast.Or)) and old == ("and" if isinstance(x, ast.And) else "or"):
            found = True
            left, right = go(x.left), go(x.right)
            return {"and": ast.And, "or": ast.Or}[new](left, right) if new in ("and", "or") \
                else ast.BinOp(new, left, right)
        if isinstance(x, ast.Expr):
            return attrs.evolve(x, **{f.name: go(getattr(x, f.name)) for f in attrs.fields(type(x))
                                      if f.name != "span"})
        if isinstance(x, tuple):
            return tuple(go(y) for y in x)
        return x
    return go(e), found


def shifted_constants(e, c: int) -> list:
    """One copy of e per integer constant in it, that constant shifted by c."""
    sites = []

    def collect(x, path):
        if isinstance(x, ast.Const) and type(x.value) is int:
            sites.append(path)
        elif isinstance(x, ast.Expr):
            for f in attrs.fields(type(x)):
                if f.name != "span":
                    collect(getattr(x, f.name), path + (f.name,))
        elif isinstance(x, tuple):
            for i, y in enumerate(x):
                collect(y, path + (i,))
    collect(e, ())

    def rebuild(x, path):
        if not path:
            return ast.Const(x.value + c)
        head, rest = path[0], path[1:]
        if isinstance(x, tuple):
            return tuple(rebuild(y, rest) if i == head else y for i, y in enumerate(x))
        return attrs.evolve(x, **{head: rebuild(getattr(x, head), rest)})
    return [rebuild(e, p) for p in sites]


_STR_ESC = str.maketrans({'"': "'"})


def sexpr(e) -> str:
    """A meta-language expression in the equation notation (prefix s-expressions)."""
    if isinstance(e, ast.Const):
        v = e.value
        if v is True or v is False:
            return "true" if v else "false"
        if v is None:
            return "none"
        if isinstance(v, str):
            return '"' + v.translate(_STR_ESC) + '"'
        if isinstance(v, list):
            return "(list " + " ".join(sexpr(ast.Const(x)) for x in v) + ")" if v else "(list)"
        return str(v)
    if isinstance(e, ast.Var):
        return e.name
    if isinstance(e, (ast.BinOp, ast.And, ast.Or)):
        head = e.op if isinstance(e, ast.BinOp) else type(e).__name__.lower()
        return f"({head} {sexpr(e.left)} {sexpr(e.right)})"
    if isinstance(e, (ast.Neg, ast.Not)):
        return f"({'- 0' if isinstance(e, ast.Neg) else 'not'} {sexpr(e.operand)})"
    if isinstance(e, ast.If):
        return f"(if {sexpr(e.cond)} {sexpr(e.then)} {sexpr(e.orelse)})"
    if isinstance(e, ast.ListExpr):
        return "(list" + "".join(" " + sexpr(x) for x in e.items) + ")"
    if isinstance(e, ast.Lambda):
        return f"(fn ({' '.join(e.params)}) {sexpr(e.body)})"
    if isinstance(e, ast.Let):
        return sexpr(substitute(e.body, {e.name: e.value}))
    if isinstance(e, ast.Call):
        return "(" + " ".join([sexpr(e.fn), *(sexpr(a) for a in e.args)]) + ")"
    raise ValueError(f"no equation notation for {type(e).__name__}")


# ---------------------------------------------------------------- expansion


def _fits(types: tuple[str, ...], t: ast.Type) -> bool:
    return not types or t.name in types or (t.name == "list" and "list" in types)


def _expand(template, base: ast.Expr, env: dict) -> list:
    """Every body one template gives for one binding of P, Q, C (an empty list: it does not apply)."""
    if isinstance(template, ast.Var):
        if template.name == "base":
            return [base]
        return [env.get(template.name, template)]
    if isinstance(template, ast.Call) and isinstance(template.fn, ast.Var) and template.fn.name in _SPECIAL:
        name, args = template.fn.name, template.args
        if name == "base_with":
            pairs = list(zip(args[::2], args[1::2]))
            mapping = {}
            for var, repl in pairs:
                target = env.get(var.name, var) if isinstance(var, ast.Var) else var
                if not isinstance(target, ast.Var):
                    return []
                options = _expand(repl, base, env)
                if len(options) != 1:
                    return []
                mapping[target.name] = options[0]
            return [substitute(base, mapping)]
        if name == "base_with_all":
            wanted = args[0].name if isinstance(args[0], ast.Var) else ""
            mapping = {}
            for p in env["$params"]:
                if p.type.name == wanted:
                    mapping[p.name] = _expand(args[1], base, {**env, "X": ast.Var(p.name)})[0]
            return [substitute(base, mapping)] if mapping else []
        if name == "replace_op":
            new, found = replace_operator(base, args[0].value, args[1].value)
            return [new] if found else []
        if name == "shift_const":
            c = _expand(args[0], base, env)[0]
            return shifted_constants(base, c.value) if isinstance(c, ast.Const) else []
    if isinstance(template, ast.Expr):
        fields = [f.name for f in attrs.fields(type(template)) if f.name != "span"]
        options = [_expand_field(getattr(template, f), base, env) for f in fields]
        return [attrs.evolve(template, **dict(zip(fields, combo))) for combo in itertools.product(*options)]
    return [template]


def _expand_field(x, base, env) -> list:
    if isinstance(x, tuple):
        parts = [_expand_field(y, base, env) for y in x]
        return [tuple(c) for c in itertools.product(*parts)]
    if isinstance(x, ast.Expr):
        return _expand(x, base, env)
    return [x]


def _scoped(body: ast.Expr, base: ast.Expr, scope: str) -> ast.Expr:
    if scope == "top":
        return body
    return ast.If(ast.Var(scope), body, base)


def family_bodies(fam: Family, d: ast.Definition) -> list[tuple[str, ast.Expr]]:
    """(label, body) for every hypothesis this family makes of base line d."""
    if fam.on and fam.on != d.kind:
        return []
    if fam.returns and not _fits(fam.returns, d.returns):
        return []
    params = [p for p in d.params if not p.variadic]
    ps = [p for p in params if _fits(fam.param, p.type)] if fam.param else [None]
    out = []
    for p in ps:
        qs = [q for q in params if q is not p and _fits(fam.param2, q.type)
              and (p is None or q.type.name == p.type.name or "any" in (q.type.name, p.type.name))] \
            if fam.param2 else [None]
        for q in qs:
            if fam.param2 and params.index(q) < params.index(p) and fam.name.startswith("swapped"):
                continue  # a swap is symmetric
            for c in fam.consts or (None,):
                for w in fam.words or (None,):
                    env = {"$params": d.params}
                    if p is not None:
                        env["P"] = ast.Var(p.name)
                    if q is not None:
                        env["Q"] = ast.Var(q.name)
                    if c is not None:
                        env["C"] = ast.Const(c)
                    if w is not None:
                        env["S"] = ast.Const(w)
                    label = ",".join(str(x) for x in (p and p.name, q and q.name, c, w) if x is not None)
                    for template in fam.bodies:
                        for body in _expand(template, d.body, env):
                            out.append((label, body))
    return out


# ---------------------------------------------------------------- the space


def _fingerprint(unit, samples, contexts) -> tuple:
    out = []
    for args in samples:
        for ctx in contexts:
            ctx.steps = 0
            try:
                out.append(repr(unit(ctx, list(args))))
            except (EvalError, RecursionError, MemoryError, OverflowError, TypeError):
                out.append("<error>")
    return tuple(out)


def scope_contexts() -> list:
    """One context per scope a family may be conditioned on (top level, in a function, in a loop)."""
    out = []
    for in_function, in_loop in ((False, False), (True, False), (False, True)):
        ctx = Ctx()
        ctx.in_function, ctx.in_loop = in_function, in_loop
        ctx.call_depth, ctx.loop_depth = int(in_function), int(in_loop)
        out.append(ctx)
    nested = Ctx()  # inside two loops: where a hypothesis on loop_depth > 1 shows (last: the quick key skips it)
    nested.in_loop, nested.loop_depth = True, 2
    out.append(nested)
    return out


BOUNDARY = (1, -2, 2)  # small integers a threshold family turns on (`v > 0` and `v > 1` differ at 1 only)


def boundary_samples(params, drawn, words=()) -> list[list]:
    """Argument lists with every integer-or-any parameter at a small boundary value, and every string
    parameter at each of the families' words, with either truth value (the rest as in the first drawn list): the drawn pools of an
    `any` parameter hold no 1, so `v > 0` and `v > 1` merged there, and none holds "while"."""
    if not drawn:
        return []
    out = []
    if any(p.type.name in ("int", "any") and not p.variadic for p in params):
        out += [[k if p.type.name in ("int", "any") and not p.variadic else a for p, a in zip(params, drawn[0])]
                for k in BOUNDARY]
    if any(p.type.name == "any" and not p.variadic for p in params):  # none, where a hook may read a default
        out.append([None if p.type.name == "any" and not p.variadic else a for p, a in zip(params, drawn[0])])
    if any(p.type.name == "str" and not p.variadic for p in params):
        flags = (True, False) if any(p.type.name == "bool" for p in params) else (None,)
        out += [[w if p.type.name == "str" and not p.variadic else f if p.type.name == "bool" and f is not None
                 else a for p, a in zip(params, drawn[0])] for w in words for f in flags]
    return out


def build_space(world, families=None, seed: int = 0) -> dict[str, list[Hypothesis]]:
    """target -> its hypotheses (the base line first), built from the world's base lines only."""
    families = families_for(world) if families is None else families
    mc = MetaCompiler(world.builder.mc.constants, world.builder.mc.defs)
    space: dict[str, list[Hypothesis]] = {}
    contexts = scope_contexts()
    words = tuple(dict.fromkeys(w for fam in families for w in fam.words))
    total = max(1.0, sum(fam.weight for fam in families))
    for target, d in world.builder.base.items():
        names = [p.name for p in d.params]
        variadic = bool(d.params) and d.params[-1].variadic
        rng = random.Random(f"explorer:{seed}:{target}")
        drawn = list(curated_values(d.params, rng, SAMPLES // 2)) + list(values_for(d.params, rng, SAMPLES // 2))
        drawn += boundary_samples(d.params, drawn, words)
        samples = [a[:-1] + list(a[-1]) if variadic else a for a in drawn]
        candidates = [("base", "", "top", d.body, BASE_WEIGHT)]
        for fam in families:
            bodies = family_bodies(fam, d)
            if not bodies:
                continue
            # a family's share of the prior is its weight over all families' weights (1 each unless a family
            # says less), so a light family added to the file leaves the others' priors almost as they were
            share = (1 - BASE_WEIGHT) * fam.weight / total
            per = share / (len(bodies) * len(fam.scopes))
            for scope in fam.scopes:
                for label, body in bodies:
                    candidates.append((fam.name, label, scope, _scoped(body, d.body, scope), per))
        # behaviour keys: a short one (few samples, top level) first; the full one only on a collision
        short_seen: dict[tuple, list[int]] = {}
        full: dict[int, tuple] = {}
        hyps: list[Hypothesis] = []
        ids: set[str] = set()
        for fam_name, label, scope, body, weight in candidates:
            try:
                sexpr(body)
                # closures, not native code: a hypothesis runs on a few dozen samples and probes, where
                # compiling it natively costs more than it saves (demo: building the space 1.5 -> 0.5 s,
                # scoring unchanged; AlienCode's explorer 19 -> 14 s), with the same values either way
                unit = mc.unit(f"{target} ({fam_name})", names, body, variadic, native=False)
            except (SpecError, ValueError):
                continue
            short = _fingerprint(unit, samples[:SHORT], contexts[:1])
            twin, mine = None, None
            for i in short_seen.get(short, ()):
                if i not in full:
                    full[i] = _fingerprint(hyps[i].unit, samples, contexts)
                mine = mine or _fingerprint(unit, samples, contexts)
                if mine == full[i]:
                    twin = i
                    break
            if twin is not None:  # behaves like an earlier (simpler) hypothesis: its prior joins that one
                hyps[twin] = attrs.evolve(hyps[twin], weight=hyps[twin].weight + weight)
                continue
            short_seen.setdefault(short, []).append(len(hyps))
            hid = f"{target}|{fam_name}|{label}|{scope}"
            if hid in ids:  # several bodies of one family with one binding: numbered
                hid = f"{hid}#{sum(1 for i in ids if i.startswith(hid))}"
            ids.add(hid)
            hyps.append(Hypothesis(hid, target, fam_name, body, tuple(names), weight, unit))
        space[target] = hyps
    return space
