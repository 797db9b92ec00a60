"""Repairing a naive answer for the explorer's believed world (program and function tasks).

A naive answer is what a programmer who read the manual writes; the explorer
rewrites it so that, in the world it believes in, it does what the manual says
it does: literals are written so that they denote the manual's values, output
arguments are reordered when printing reorders them, conditions are made
boolean when truthiness differs, and each call of an operator believed
perturbed is replaced by a rewrite (swapped arguments, shifted arguments or
result, a negation, a reversal) checked on sample arguments in the call's
scope. A perturbation no rewrite undoes is left as it is.
"""
from __future__ import annotations

import re

from lark import Token, Tree

from worldspec.compiler.program.believed import context
from worldspec.compiler.program.probegen import quote

_INT = re.compile(r"(?<![A-Za-z0-9_])-?\d+(?![A-Za-z0-9_.])")
_ESC = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _string_end(text: str, i: int) -> int:
    """The index just past the string literal that starts at text[i] == '"'."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return len(text)


def _unquote(lit: str) -> str:
    body, out, k = lit[1:-1], [], 0
    while k < len(body):
        if body[k] == "\\" and k + 1 < len(body):
            out.append(_ESC.get(body[k + 1], body[k + 1]))
            k += 2
        else:
            out.append(body[k])
            k += 1
    return "".join(out)


def reencode_literals(ex, text: str, world) -> str:
    """Every literal rewritten to denote, in the believed world, the value the manual gives it."""
    out, i = [], 0
    while i < len(text):
        if text[i] == '"':
            j = _string_end(text, i)
            lit = text[i:j]
            new = ex.text_of(_unquote(lit), world) if lit.endswith('"') and len(lit) > 1 else None
            out.append(new or lit)
            i = j
            continue
        m = _INT.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            new = ex.text_of(int(m.group()), world)
            out.append(new or m.group())
            i = m.end()
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def split_args(text: str) -> list[str]:
    """The top-level comma-separated parts of an argument list."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = _string_end(text, i)
            cur.append(text[i:j])
            i = j
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _close(text: str, open_at: int) -> int:
    """The index of the parenthesis closing the one at open_at (len(text) when none)."""
    depth, i = 0, open_at
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = _string_end(text, i)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _outside_strings(text: str) -> list[bool]:
    mask, i = [True] * len(text), 0
    while i < len(text):
        if text[i] == '"':
            j = _string_end(text, i)
            for k in range(i, j):
                mask[k] = False
            i = j
        else:
            i += 1
    return mask


def operators_as_calls(surface, text: str, ops: set) -> str:
    """The program with every infix or prefix operator whose op is in `ops` written as that op's call
    (`n % 3` -> `MOD(n, 3)`), so that a rewrite of the op's calls reaches it; unchanged when it does not parse."""
    table = getattr(surface, "operators", ())
    if not ops or not any(o.op in ops for o in table):
        return text
    src = text.rstrip() + "\n"
    try:
        tree = surface.parser.parse(src)
    except Exception:  # noqa: BLE001 — a naive answer the world cannot parse is left for the run to report
        return text

    def operator(node):
        kind, _, index = node.data.partition("_") if isinstance(node, Tree) else ("", "", "")
        if kind in ("infix", "prefix") and index.isdigit():
            o = table[int(index)]
            return o if o.op in ops else None
        return None

    def touched(node) -> bool:
        return isinstance(node, Tree) and any(operator(n) is not None for n in node.iter_subtrees())

    def own(node, inner, render) -> str:
        o = operator(node)
        if o is None:
            return inner()
        operands = [c for c in node.children if c is not None and not (isinstance(c, Token) and str(c) == o.symbol)]
        return f"{o.op}({', '.join(render(c, *_span(c)) for c in operands)})"

    if any(_span(c) is None for c in tree.iter_subtrees() if operator(c) is not None):
        return text
    return render_tree(src, tree, touched, own).rstrip("\n") + ("\n" if text.endswith("\n") else "")


def _span(node):
    if isinstance(node, Token):
        return (node.start_pos, node.end_pos) if node.start_pos is not None else None
    if isinstance(node, Tree) and not node.meta.empty:
        return node.meta.start_pos, node.meta.end_pos
    return None


def render_tree(src: str, tree, touched, own) -> str:
    """src (the text tree was parsed from) re-rendered node by node: `own(node, inner, render)` gives a node's
    text, where inner() is its text with the children `touched` says may change re-rendered, and
    render(child, start, end) renders one child the same way."""
    def render(node, start: int, end: int) -> str:
        def inner() -> str:
            out, at = [], start
            for c in (node.children if isinstance(node, Tree) else ()):
                sp = _span(c)
                if sp is None or not touched(c) or sp[0] < at:
                    continue
                out += [src[at:sp[0]], render(c, *sp)]
                at = sp[1]
            return "".join(out) + src[at:end]
        return own(node, inner, render)
    return render(tree, 0, len(src))


def wrap_nodes(src: str, tree, wrap: dict) -> str:
    """src (the text tree was parsed from) with the text of each node whose id is in `wrap` replaced by
    wrap[id](its text, with inner wrapped nodes already replaced)."""
    def touched(node) -> bool:
        return id(node) in wrap or isinstance(node, Tree) and any(id(n) in wrap for n in node.iter_subtrees())

    def own(node, inner, render) -> str:
        text = inner()
        return wrap[id(node)](text) if id(node) in wrap else text
    return render_tree(src, tree, touched, own)


def rewrite_calls(text: str, name: str, rewrite) -> str:
    """Every call `name(...)` replaced by rewrite(args, offset) (None keeps it), innermost first."""
    mask = _outside_strings(text)
    starts = [m.start() for m in re.finditer(rf"(?<![A-Za-z0-9_]){re.escape(name)}\s*\(", text) if mask[m.start()]]
    for s in reversed(starts):
        open_at = text.index("(", s)
        close = _close(text, open_at)
        if close >= len(text):
            continue
        new = rewrite(split_args(text[open_at + 1:close]), s)
        if new is not None:
            text = text[:s] + new + text[close + 1:]
    return text


class Repairer:
    """Rewrites for one believed world (found once per operator and scope, then reused)."""

    def __init__(self, ex):
        self.ex = ex
        self.world = ex.believed_world()
        self.manual = ex.believed.manual
        s = ex.surface
        self.heads = {k: s.word(k).split("{")[0].strip() for k in ("function", "for", "while")
                      if s.has(k) and "{" in s.word(k)}
        self.helpers = self._helpers()
        self.plain = self._plain_helpers()
        self.rewrites: dict[tuple, object] = {}

    # -- helpers: operators that, as believed, compute a plain function

    def _helpers(self) -> dict:
        refs = {"sub": (("int", "int"), lambda a, b: a - b), "add": (("int", "int"), lambda a, b: a + b),
                "not": (("bool",), lambda a: not a),
                "rev": (("list",), lambda xs: list(reversed(xs))), "max": (("nlist",), max),
                "count": (("list", "int"), lambda xs, x: xs.count(x)), "lt": (("int", "int"), lambda a, b: a < b),
                "and": (("bool", "bool"), lambda a, b: a and b), "or": (("bool", "bool"), lambda a, b: a or b),
                "join": (("strlist", "str"), lambda xs, sep: sep.join(xs))}
        samples = {"int": (0, 3, -4, 7, 12, 1), "bool": (True, False), "list": ([1, 2, 3], [], [5, -1], [3, 3, 0]),
                   "nlist": ([1, 2, 3], [5, -1], [0], [-4, -9]), "strlist": (["ab", "c"], ["x"], [], ["a b", ""]),
                   "str": ("-", "", " ", "ab")}
        found = {}
        for key, (types, ref) in refs.items():
            for target, d in self.ex.base.items():
                if d.kind != "op" or len(d.params) != len(types) or any(p.variadic for p in d.params):
                    continue
                h = self.ex.best(target)
                ok = True
                for k in range(6):
                    args = [bool((k >> j) % 2) if t == "bool" else samples[t][(k + j) % len(samples[t])]
                            for j, t in enumerate(types)]
                    try:
                        got, want = h.unit(context("top"), [list(a) if isinstance(a, list) else a for a in args]), \
                            ref(*args)
                        ok = type(got) is type(want) and got == want  # NO is not the count 0
                    except Exception:  # noqa: BLE001 — a helper candidate that fails is not a helper
                        ok = False
                    if not ok:
                        break
                if ok:
                    found[key] = d.name
                    break
        return found

    def _plain_helpers(self) -> dict:
        """Operators that, as the manual documents them, give a list's length, its i-th element and
        a range (the loop rewrite writes with them; the operator repair then fixes their calls)."""
        refs = {"len": (([5, 6, 7],), 3), "index": (([5, 6, 7], 1), 6), "range": ((0, 3), [0, 1, 2])}
        found = {}
        for key, (args, want) in refs.items():
            for target, d in self.ex.base.items():
                if d.kind != "op" or len(d.params) != len(args) or any(p.variadic for p in d.params):
                    continue
                base = next(h for h in self.ex.space[target] if h.is_base)
                try:
                    ok = base.unit(context("top"), [list(a) if isinstance(a, list) else a for a in args]) == want
                except Exception:  # noqa: BLE001 — an operator that fails on these arguments is not it
                    ok = False
                if ok:
                    found[key] = d.name
                    break
        return found

    # -- loops whose bindings are believed perturbed

    def loop_bindings_perturbed(self) -> bool:
        """Whether iteration or a loop's stores are believed to differ from the manual."""
        return any(t in self.ex.weights and not self.ex.best(t).is_base for t in ("hook iterate", "hook assign"))

    def index_loops(self, text: str) -> str:
        """Loops rewritten so that what they bind cannot be changed by a perturbed iteration or store:
        each `for v in e` walks the indices of e (held in a variable) and every variable stored inside a
        loop holds a one-element list (lists are stored as they are), read through the index operator."""
        s, mk, h = self.ex.surface, self.ex.list_maker, self.plain
        if not (self.loop_bindings_perturbed() and mk and {"len", "index", "range"} <= set(h)
                and all(s.has(k) for k in ("for", "assign"))):
            return text
        fpre, fpost = s.word("for").split("{name}")
        fmid, fend = fpost.split("{expr}")
        apre, apost = s.word("assign").split("{name}")
        amid = apost.split("{expr}")[0]
        fn = s.word("function").split("{name}")[0] if s.has("function") else None
        zero, out, stored, loop_at, n, region = "0", [], {}, [], 0, 0
        regions = []  # the region (top level or one function body) of every output line
        for line in text.split("\n"):
            ind = len(line) - len(line.lstrip())
            body = line.strip()
            if body and ind == 0:
                region = len(out) + 1 if fn and body.startswith(fn) else 0
            while loop_at and body and ind <= loop_at[-1]:
                loop_at.pop()
            m = re.fullmatch(rf"{re.escape(fpre)}(\w+){re.escape(fmid)}(.*){re.escape(fend)}", body) if fend else None
            if m:
                n += 1
                pad, var = line[:ind], m.group(1)
                out += [f"{pad}{apre}zl{n}{amid}{m.group(2)}",
                        f"{pad}{fpre}zi{n}{fmid}{h['range']}({zero}, {h['len']}(zl{n})){fend}",
                        f"{pad}    {apre}{var}{amid}{h['index']}(zl{n}, zi{n})"]
                regions += [region] * 3
                stored.setdefault(region, set()).add(var)
                loop_at.append(ind)
                continue
            a = re.match(rf"{re.escape(apre)}(\w+){re.escape(amid)}", body)
            if a and loop_at:
                stored.setdefault(region, set()).add(a.group(1))
            if s.has("while") and body.startswith(s.word("while").split("{expr}")[0]):
                loop_at.append(ind)
            out.append(line)
            regions.append(region)
        if not stored:
            return "\n".join(out)
        aend = apost.split("{expr}")[1]
        result = []
        for k, (line, region) in enumerate(zip(out, regions)):
            names = stored.get(region, set())
            ind = len(line) - len(line.lstrip())
            body = line.strip()
            a = re.match(rf"{re.escape(apre)}(\w+){re.escape(amid)}(.*){re.escape(aend)}$", body)
            if region and k + 1 == region:  # a function's header: parameters stored in a loop are wrapped first
                result.append(line)
                inner = next((len(x) - len(x.lstrip()) for x in out[k + 1:] if x.strip()), ind + 4)
                params = re.findall(r"\w+", body[len(fn):].split("(", 1)[-1])
                result += [f"{' ' * inner}{apre}{p}{amid}{mk}({p}){aend}" for p in params if p in names]
            elif a and a.group(1) in names:
                rhs = read_wrapped(a.group(2), names, h["index"])
                result.append(f"{line[:ind]}{apre}{a.group(1)}{amid}{mk}({rhs}){aend}")
            else:
                result.append(line[:ind] + read_wrapped(body, names, h["index"]))
        return "\n".join(result)

    # -- scopes

    def scope_at(self, text: str, offset: int) -> set[str]:
        """The scopes a position of the program is in (in_function, in_loop)."""
        lines = text[:offset].split("\n")
        here = len(lines[-1]) - len(lines[-1].lstrip())
        out = set()
        for line in reversed(lines[:-1]):
            ind = len(line) - len(line.lstrip())
            if ind < here and line.strip():
                here = ind
                word = line.strip()
                if "function" in self.heads and word.startswith(self.heads["function"]):
                    out.add("in_function")
                elif any(word.startswith(self.heads[k]) for k in ("for", "while") if k in self.heads):
                    out.add("in_loop")
        cur = text[:offset].split("\n")[-1].strip()
        if any(cur.startswith(self.heads[k]) for k in ("while",) if k in self.heads):
            out.add("in_loop")
        return out

    # -- operator rewrites

    def candidates(self, d, h):
        """(label, rewrite(args) -> text) for one operator believed perturbed."""
        name, n = d.name, len(d.params)
        sub, neg, rev = self.helpers.get("sub"), self.helpers.get("not"), self.helpers.get("rev")
        consts = sorted({int(x) for x in re.findall(r"-?\d+", h.id.split("|")[2])} | {1, -1, 2, -2}, key=abs)
        out = []
        for i in range(n):
            for j in range(i + 1, n):
                out.append(lambda a, i=i, j=j: f"{name}({', '.join(_swap(a, i, j))})")
        if sub:
            for i, p in enumerate(d.params):
                if p.type.name == "int":
                    for k in consts:
                        out.append(lambda a, i=i, k=k: f"{name}({', '.join(_put(a, i, f'{sub}({a[i]}, {k})'))})")
            for k in consts:
                out.append(lambda a, k=k: f"{sub}({name}({', '.join(a)}), {k})")
            for i, p in enumerate(d.params):
                for j, q in enumerate(d.params):
                    if i < j and p.type.name == q.type.name == "int":
                        for k in consts:
                            out.append(lambda a, i=i, j=j, k=k: f"{name}({', '.join(_put(_put(a, i, f'{sub}({a[i]}, {k})'), j, f'{sub}({a[j]}, {k})'))})")
            for i, p in enumerate(d.params):  # an argument offset by another one (x + step - 1: rounding up)
                for j, q in enumerate(d.params):
                    if i != j and p.type.name == q.type.name == "int":
                        out.append(lambda a, i=i, j=j: f"{name}({', '.join(_put(a, i, f'{sub}({a[i]}, {sub}({a[j]}, 1))'))})")
            for i, p in enumerate(d.params):  # the mirror image: -f(-x) (rounding up <-> down, signs)
                if p.type.name == "int" and d.returns.name == "int":
                    out.append(lambda a, i=i: f"{sub}(0, {name}({', '.join(_put(a, i, f'{sub}(0, {a[i]})'))}))")
            if n == 2 and all(p.type.name == "int" for p in d.params):  # a sum written with differences
                out.append(lambda a: f"{sub}({a[0]}, {sub}(0, {a[1]}))")
                # a remainder of the dividend's sign made the divisor's: the operator again, after adding b
                out.append(lambda a: f"{name}({sub}({name}({a[0]}, {a[1]}), {sub}(0, {a[1]})), {a[1]})")
            if n == 1 and d.params[0].type.name == d.returns.name == "int":  # a negation written as 0 - x
                out.append(lambda a: f"{sub}(0, {a[0]})")
        if neg:
            out.append(lambda a: f"{neg}({name}({', '.join(a)}))")
            if n == 2:
                out.append(lambda a: f"{neg}({name}({a[1]}, {a[0]}))")
        mk, join, top = self.ex.list_maker, self.helpers.get("join"), self.helpers.get("max")
        if mk and join and n >= 2 and d.returns.name == "str" and all(p.type.name == "str" for p in d.params):
            out.append(lambda a: f'{join}({mk}({", ".join(a)}), "")')  # strings joined by the list join
        if mk and top and sub and n == 1 and d.returns.name == d.params[0].type.name == "int":
            out.append(lambda a: f"{top}({mk}({a[0]}, {sub}(0, {a[0]})))")  # the larger of x and -x
        count, lt = self.helpers.get("count"), self.helpers.get("lt")
        if count and lt and n == 2 and d.returns.name == "bool":  # membership as a positive count
            out.append(lambda a: f"{lt}(0, {count}({a[0]}, {a[1]}))")
        if neg and n == 2 and all(p.type.name == "bool" for p in d.params):  # De Morgan
            for dual in (self.helpers.get("and"), self.helpers.get("or")):
                if dual:
                    out.append(lambda a, g=dual: f"{neg}({g}({neg}({a[0]}), {neg}({a[1]})))")
        if rev:
            out.append(lambda a: f"{rev}({name}({', '.join(a)}))")
            for i, p in enumerate(d.params):
                if p.type.name in ("list", "any"):
                    out.append(lambda a, i=i: f"{name}({', '.join(_put(a, i, f'{rev}({a[i]})'))})")
                    out.append(lambda a, i=i: f"{rev}({name}({', '.join(_put(a, i, f'{rev}({a[i]})'))}))")
        if sub and n == 2 and d.returns.name == "int" and all(p.type.name == "int" for p in d.params):
            # a remainder brought into the divisor's sign: f(f(a, b) + b, b)
            out.append(lambda a: f"{name}({sub}({name}({a[0]}, {a[1]}), {sub}(0, {a[1]})), {a[1]})")
        if sub and n == 1 and d.returns.name == d.params[0].type.name == "int":
            out.append(lambda a: f"{sub}(0, {a[0]})")  # a negation written as a difference from zero
        return out

    def rewrite_for(self, target: str, scope: str):
        """A rewrite that makes calls of this operator in this scope behave as the manual says (or None)."""
        key = (target, scope)
        if key in self.rewrites:
            return self.rewrites[key]
        ex, d, h = self.ex, self.ex.base[target], self.ex.best(target)
        samples = [a for a in ex.arg_tuples.get(target, ()) if not any(isinstance(x, bool) for x in a)][:8]
        samples += typical_args(d)
        expected = []
        for args in samples:
            r = self.manual.execute(f"{ex.out}({d.name}({', '.join(self._raw(a) for a in args)}))")
            expected.append(None if r.error else tuple(r.lines))
        found = None
        for cand in self.candidates(d, h):
            ok = any(want is not None for want in expected)
            for args, want in zip(samples, expected):
                texts = [self._raw(a) for a in args]
                program, _ = ex.wrap(cand(texts), scope, 0, self.manual)
                if program is None:
                    ok = False
                    break
                r = self.world.execute(reencode_literals(ex, program, self.world))
                got = None if r.error else tuple(r.lines)
                if want is not None and got != want:  # where the manual fails, the programmer relied on nothing
                    ok = False
                    break
            if ok:
                found = cand
                break
        self.rewrites[key] = found
        return found

    def _raw(self, v) -> str:
        """A value as the manual writes it (literals re-encoded later)."""
        return self.ex.text_of(v, self.manual) or quote(str(v))

    # -- the whole program

    def bool_reads_inverted(self) -> bool:
        """Whether reading a variable that holds a truth value inside a function is believed to invert it."""
        look = self.world.sem.hooks.get("lookup")
        try:
            return look is not None and all(look(context("in_function"), ["v", b]) is (not b) for b in (True, False))
        except Exception:  # noqa: BLE001 — a hook that fails on truth values does not invert them
            return False

    def correct_bool_params(self, text: str, bools: set) -> str:
        """Reads of parameters declared as truth values, inside function bodies, negated back when reading
        them inside a function is believed to invert them."""
        s, neg = self.ex.surface, self.helpers.get("not")
        if not (bools and neg and s.has("function") and self.bool_reads_inverted()):
            return text
        fn = s.word("function").split("{name}")[0]
        out, params = [], set()
        for line in text.split("\n"):
            body = line.strip()
            if body and not line[:1].isspace():
                params = set(re.findall(r"\w+", body[len(fn):].split("(", 1)[-1])) & bools \
                    if body.startswith(fn) else set()
                out.append(line)
                continue
            out.append(read_wrapped(line, params, neg, unary=True) if params else line)
        return "\n".join(out)

    def repair(self, naive: str, bools: set = frozenset(), types: dict | None = None) -> str:
        """The naive answer rewritten for the believed world (bools: the inputs declared as truth values;
        types: every declared input's type, as the prompt names it)."""
        # every operator written as its op's call: the manual's grouping made explicit (a world whose
        # precedence or associativity differs from its manual's table cannot regroup it), and a rewrite of
        # a perturbed op's calls reaches its infix uses
        surface = self.manual.surface  # the manual's table, as a programmer who read it groups
        naive = operators_as_calls(surface, naive, {o.op for o in getattr(surface, "operators", ())})
        naive = self.shift_positions(naive, types or {})
        text = self.correct_bool_params(self.index_loops(naive), set(bools))
        for target in self.ex.weights:
            kind, name = target.split(" ", 1)
            h = self.ex.best(target)
            if kind != "op" or h.is_base:
                continue

            def rewrite(args, offset, target=target, h=h):
                scopes = self.scope_at(text_now[0], offset)
                body = h.equation
                scope = next((s for s in ("in_function", "in_loop") if s in body and s in scopes), None)
                if scope is None and any(s in body for s in ("in_function", "in_loop")):
                    return None  # a perturbation of another scope: this call behaves as documented
                fix = self.rewrite_for(target, scope or "top")
                return fix(args) if fix is not None else None
            text_now = [text]
            text = rewrite_calls(text, name, rewrite)
        text = self.reorder_outputs(text)
        text = self.boolean_conditions(text, types)
        text = self.shift_element_assignments(text)
        return reencode_literals(self.ex, text, self.world)

    def index_shift(self) -> int | None:
        """The offset c for which element assignment at i + c does, as believed, what the manual says it does
        at i (0: no shift is needed; None: no small offset does it)."""
        target = "hook set_index"
        if target not in self.ex.weights or self.ex.best(target).is_base:
            return 0
        h, base = self.ex.best(target), next(x for x in self.ex.space[target] if x.is_base)
        cases = [([5, 6, 7, 8], i, 9) for i in range(4)] + [([1], 0, 2), ([3, 4], 1, 0)]
        for c in (1, -1, 2, -2):
            try:
                if all(h.unit(context("top"), [list(xs), i + c, v]) == base.unit(context("top"), [list(xs), i, v])
                       for xs, i, v in cases):
                    return c
            except Exception:  # noqa: BLE001 — an offset the believed hook rejects does not undo it
                continue
        return None

    def shift_element_assignments(self, text: str) -> str:
        """Element assignments (`xs[i] = v`, `SET xs AT i TO v`) moved by the offset that undoes a believed
        change of where they store: a literal index is rewritten, any other is shifted with the world's sum or
        difference operator."""
        s = self.ex.surface
        c = self.index_shift() if s.has("set_index") else 0
        if not c:
            return text
        add, sub = self.helpers.get("add"), self.helpers.get("sub")
        form = re.escape(s.word("set_index"))
        for key, pat in (("name", r"(?P<name>\w+)"), ("index", r"(?P<index>.+?)"), ("expr", r"(?P<expr>.+)")):
            form = form.replace(re.escape("{" + key + "}"), pat)
        lines = text.split("\n")
        for k, line in enumerate(lines):
            m = re.fullmatch(form, line.strip())
            if not m:
                continue
            idx = m.group("index").strip()
            if re.fullmatch(r"-?\d+", idx):
                new = str(int(idx) + c)
            elif add:
                new = f"{add}({idx}, {c})"
            elif sub:
                new = f"{sub}({idx}, {-c})"
            else:
                continue
            lines[k] = line[:len(line) - len(line.lstrip())] + s.render(
                "set_index", name=m.group("name"), index=new, expr=m.group("expr"))
        return "\n".join(lines)

    def position_shifts(self) -> dict:
        """kind -> k: a position written i + k reads, as believed, what i reads in the manual (get, set, from,
        to: the kernel's position kinds), for lists and strings; 0 where none of -2..2 does."""
        bel, man = self.world.sem.hooks.get("position"), self.manual.sem.hooks.get("position")
        if bel is None:
            return {}
        if man is None:  # the manual's world leaves its documented position hook out: positions as written
            man = lambda ctx, args: args[2]  # noqa: E731
        ctx, out = context("top"), {}
        for kind in ("get", "set", "from", "to"):
            for k in (0, 1, -1, 2, -2):
                try:
                    ok = all(bel(ctx, [kind, xs, i + k]) == man(ctx, [kind, xs, i])
                             for xs in ([5, 6, 7, 8], "abcd") for i in range(-2, 5))
                except Exception:  # noqa: BLE001 — a hook that fails there does not fit
                    ok = False
                if ok:
                    out[kind] = k
                    break
        return out

    def shift_positions(self, text: str, types: dict) -> str:
        """Every written position (an index, a slice's bounds, an element assignment's positions) of a list or
        string moved so that it reads, as believed, what the manual says it reads (positions counted from 1:
        xs[1] -> xs[2]). Only positions in what is surely a list or string move (a declared list or string
        input, a list or string literal), since the shifts are found on lists and strings alone."""
        shifts = self.position_shifts()
        sub = self.helpers.get("sub")
        if not any(shifts.values()):
            return text
        src = text.rstrip() + "\n"
        try:
            tree = self.manual.surface.parser.parse(src)
        except Exception:  # noqa: BLE001 — left for the run to report
            return text
        wrap = {}

        def moved(k):
            def fix(t):
                t = t.strip()
                if re.fullmatch(r"-?\d+", t):
                    return str(int(t) + k)
                return f"{sub}({t}, {-k})" if sub else None
            return fix

        def sequence(node, depth: int = 0) -> bool:
            """node is surely a list or string (an index `depth` levels into a declared input counts)."""
            while isinstance(node, Tree) and node.data == "index":
                node, depth = node.children[0], depth + 1
            if isinstance(node, Tree) and node.data in ("list", "str", "string"):
                return depth == 0
            if isinstance(node, Tree) and node.data == "var":
                t = types.get(str(node.children[0]), "")
                return t.startswith("str") and depth == 0 or t.startswith("list" + "[list" * depth)
            return False

        def mark(node, kind):
            k = shifts.get(kind, 0)
            if node is not None and k and _span(node) is not None:
                wrap[id(node)] = moved(k)
        for node in tree.iter_subtrees():
            if node.data == "set_item":
                target, index = node.children[0], node.children[1]
                if sequence(target):
                    mark(index, "set")
                while isinstance(target, Tree) and target.data == "index":
                    if sequence(target.children[0]):
                        mark(target.children[1], "set")
                    target = target.children[0]
        chained = {id(n) for n in wrap}
        for node in tree.iter_subtrees():
            if node.data == "index" and id(node.children[1]) not in chained and sequence(node.children[0]):
                mark(node.children[1], "get")
            elif node.data == "slice" and sequence(node.children[0]):
                mark(node.children[1], "from")
                mark(node.children[2], "to")
        if any(f(" 0") is None for f in wrap.values()):
            return text
        return wrap_nodes(src, tree, wrap).rstrip("\n") + ("\n" if text.endswith("\n") else "")

    def reorder_outputs(self, text: str) -> str:
        out = self.world.sem.hooks.get("output")
        try:
            reverses = out is not None and out(context("top"), [["a", "b"]]) == "b a"
        except Exception:  # noqa: BLE001
            reverses = False
        if not reverses:
            return text
        return rewrite_calls(text, self.ex.out, lambda args, _: f"{self.ex.out}({', '.join(reversed(args))})")

    def nonzero_test(self):
        """An operator OP with OP(n, 0) holding, as believed, exactly when the integer n holds in the manual
        (NE: a condition on a declared integer written as a comparison, which truthiness does not reach)."""
        truthy = self.world.sem.hooks.get("truthy")
        ctx = context("top")
        for d in self.ex.base.values():
            if d.kind != "op" or d.returns.name != "bool" or len([p for p in d.params if not p.variadic]) != 2 \
                    or any(p.type.name not in ("int", "any") for p in d.params) or not self.ex.best(f"op {d.name}").is_base:
                continue
            op = self.world.sem.ops.get(d.name)
            try:
                if all(bool(truthy(ctx, [op(ctx, [n, 0])]) if truthy else op(ctx, [n, 0])) == (n != 0)
                       for n in range(-3, 4)):
                    return d.name
            except Exception:  # noqa: BLE001 — an operator that fails on integers does not serve
                continue
        return None

    def boolean_conditions(self, text: str, types: dict | None = None) -> str:
        types = types or {}
        neg = self.helpers.get("not")
        perturbed = "hook truthy" in self.ex.weights and not self.ex.best("hook truthy").is_base
        if neg is None or not perturbed:
            return text
        s = self.ex.surface
        nonzero = self.nonzero_test() if any(t == "int" for t in types.values()) else None
        lines = text.split("\n")
        for key in ("if", "elif", "while"):
            if not s.has(key) or "{expr}" not in s.word(key):
                continue
            pre, post = s.word(key).split("{expr}")
            for k, line in enumerate(lines):
                body = line.strip()
                if body.startswith(pre) and body.endswith(post) and len(body) > len(pre) + len(post):
                    cond = body[len(pre):len(body) - len(post)]
                    test = f"{nonzero}({cond}, 0)" if nonzero and types.get(cond.strip()) == "int" \
                        else f"{neg}({neg}({cond}))"
                    lines[k] = line[:len(line) - len(line.lstrip())] + f"{pre}{test}{post}"
        return "\n".join(lines)


TYPICAL = {"int": (0, 1, 2, 3, -2, 5, 4), "str": ("abc", "hello world", "Ab", "b"),
           "list": ((1, 2, 3, 4, 5), (9, 8, 7), (4, 1, 3, 2), (), (6,))}


def typical_args(d, n: int = 14) -> list[tuple]:
    """Argument tuples of the kind programs pass (small indices inside lists and strings), which
    separate rewrites that the explorer's wide-ranging probe arguments leave tied (e.g. a slice
    whose bounds both fall outside the list)."""
    out = []
    for k in range(n):
        args = []
        for i, p in enumerate(d.params):
            pool = TYPICAL.get(p.type.name, TYPICAL["int"] + TYPICAL["str"][:2])
            if p.variadic or p.type.name == "fn":
                return out
            if p.type.name == "bool":
                args.append(bool((k >> i) % 2))
            else:
                args.append(pool[(k * (i + 1) + i * 3) % len(pool)])
        if tuple(args) not in out:
            out.append(tuple(args))
    return out


def declared_types(prompt: str) -> dict:
    """Every input a task's prompt declares, with its type ("...: g (list[list[int]]), s (str)")."""
    return dict(re.findall(r"(\w+) \(((?:[^()\[\]]|\[[^()]*?\])+)\)", prompt))


def declared_bools(prompt: str) -> set:
    """The inputs a task's prompt declares as truth values ("...: flag (bool), xs (list)")."""
    return set(re.findall(r"(\w+) \(bool\)", prompt))


def read_wrapped(text: str, names: set, index: str, unary: bool = False) -> str:
    """Reads of these variables (outside string literals) replaced by their one-element list's element
    (unary: by index(v), a one-argument operator applied to them)."""
    mask = _outside_strings(text)
    out, i = [], 0
    for m in re.finditer(r"(?<![A-Za-z0-9_])[A-Za-z_]\w*(?![A-Za-z0-9_(])", text):
        if m.group() in names and mask[m.start()]:
            out += [text[i:m.start()], f"{index}({m.group()})" if unary else f"{index}({m.group()}, 0)"]
            i = m.end()
    return "".join(out) + text[i:]


def _swap(a: list, i: int, j: int) -> list:
    b = list(a)
    b[i], b[j] = b[j], b[i]
    return b


def _put(a: list, i: int, x: str) -> list:
    b = list(a)
    b[i] = x
    return b
