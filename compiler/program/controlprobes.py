"""Probes of the control hooks (positions, a loop's else block, break and continue, closures).

Each program is written in the world's own syntax (its `syntax` block: `Surface.render`, the forms it has
switched on) from the values the explorer can write, and prints one line, so that the explorer reads it as
one segment of a call (compiler/program/explorer.py `hook_segments`). A form the world does not have gives
no program: the hook is then probed by nothing (docs/explorer.md says which).
"""
from __future__ import annotations

# What running one of these programs relies on besides the hook it tests (kept when they are targets).
DEPS = frozenset({"hook int_literal", "hook str_literal", "hook assign", "hook lookup", "hook iterate",
                  "hook truthy", "hook show", "hook output"})


def control_programs(name: str, s, k: int, t, out: str) -> list[tuple[str, set]]:
    """(program, dependencies) probing the hook `name` (position, loop_else, jump, enclosed); `s` is the
    world's surface, `k` the segment's number (its variable names), `t(value)` the text of a value (None when
    the explorer cannot write it), `out` the output statement's word."""
    texts = {v: t(v) for v in (0, 1, 2, 3, 4, 5, 6, 7, 9)}
    lists = {v: t(list(v)) for v in ((5, 6, 7), (5, 6, 7, 8), (1, 2), (3, 4))}
    word = t("abc")
    if None in texts.values() or None in lists.values() or not s.has("assign"):
        return []
    make = {"position": _positions, "loop_else": _loop_else, "jump": _jumps, "enclosed": _closures}[name]
    return [(p, set(DEPS)) for p in make(s, k, texts, lists, word, out)]


def _block(*lines: str) -> str:
    return "\n".join(lines)


def _positions(s, k, n, lists, word, out) -> list[str]:
    if not s.has("index"):
        return []
    seven, eight = lists[(5, 6, 7)], lists[(5, 6, 7, 8)]
    progs = [f"{out}({seven}[{n[1]}])", f"{out}({seven}[{n[0]}])", f"{out}({eight}[{n[1]}:{n[3]}])"]
    if word is not None:
        progs.append(f"{out}({word}[{n[1]}])")
    if s.has("set_index"):
        v = f"zx{k}"
        progs.append(_block(s.render("assign", name=v, expr=seven),
                            s.render("set_index", name=v, index=n[1], expr=n[9]), f"{out}({v})"))
    return progs


def _loop_else(s, k, n, lists, word, out) -> list[str]:
    if not (s.has("loop_else") and s.has("break")):
        return []
    v, c, i = f"ze{k}", f"zc{k}", "    "
    brk, els = s.word("break"), s.render("loop_else")
    yes, no = s.word("true"), s.word("false")
    progs = [_block(s.render("assign", name=v, expr=n[0]), s.render("for", name=c, expr=lists[(1, 2)]),
                    i + brk, els, i + s.render("assign", name=v, expr=n[1]), f"{out}({v})"),
             _block(s.render("assign", name=v, expr=n[0]), s.render("for", name=c, expr=lists[(1, 2)]),
                    i + s.render("assign", name=v, expr=n[2]), els, i + s.render("assign", name=v, expr=n[1]),
                    f"{out}({v})")]
    if s.has("while"):
        progs += [_block(s.render("assign", name=v, expr=n[0]), s.render("while", expr=yes), i + brk, els,
                         i + s.render("assign", name=v, expr=n[1]), f"{out}({v})"),
                  _block(s.render("assign", name=v, expr=n[0]), s.render("while", expr=no),
                         i + s.render("assign", name=v, expr=n[2]), els, i + s.render("assign", name=v, expr=n[1]),
                         f"{out}({v})")]
    return progs


def _jumps(s, k, n, lists, word, out) -> list[str]:
    if not s.has("break"):
        return []
    v, a, b, i = f"zj{k}", f"za{k}", f"zb{k}", "    "
    outer, inner = s.render("for", name=a, expr=lists[(1, 2)]), s.render("for", name=b, expr=lists[(3, 4)])
    progs = []
    for stop in [s.word("break")] + ([s.word("continue")] if s.has("continue") else []):
        progs.append(_block(s.render("assign", name=v, expr=n[0]), inner, i + s.render("assign", name=v, expr=b),
                            i + stop, f"{out}({v})"))
        progs.append(_block(s.render("assign", name=v, expr=n[0]), outer, i + inner,
                            i + i + s.render("assign", name=v, expr=b), i + i + stop, f"{out}({v})"))
    if s.has("break_many") and s.has("list"):
        progs.append(_block(s.render("assign", name=v, expr=n[0]), outer, i + inner,
                            i + i + s.render("assign", name=v, expr=f"[{a}, {b}]"),
                            i + i + s.render("break_many", count="2"), f"{out}({v})"))
    return progs


def _closures(s, k, n, lists, word, out) -> list[str]:
    if not (s.has("function") and s.has("return")):
        return []
    f, g, v, i = f"zf{k}", f"zg{k}", f"zk{k}", "    "
    return [_block(s.render("function", name=f, params=""), i + s.render("assign", name=v, expr=n[1]),
                   i + s.render("function", name=g, params=""), i + i + s.render("return", expr=v),
                   i + s.render("assign", name=v, expr=n[2]), i + s.render("return", expr=f"{g}()"),
                   f"{out}({f}())"),
            _block(s.render("function", name=f, params="zp"), i + s.render("function", name=g, params=""),
                   i + i + s.render("return", expr="zp"), i + s.render("return", expr=f"{g}()"),
                   f"{out}({f}({n[7]}))")]


# Hooks of statements and calls probed by `statement_programs` (each needs only forms the world has).
STATEMENT_HOOKS = ("list_literal", "float_literal", "set_index", "assign_many", "for_many", "update", "arguments",
                   "returned", "no_return", "passes", "branch_order", "else_runs")


def statement_programs(name: str, s, k: int, t, out: str, mutators=()) -> list[tuple[str, set]]:
    """(program, dependencies) probing a statement or call hook (STATEMENT_HOOKS): list and decimal literals,
    element and multiple assignment, pairs unpacked by a loop, a mutating call's write-back, a function's
    arguments and result, a loop's passes, an if chain's order and else block. `mutators` holds (operator,
    the text of its arguments with `{var}` where the variable it writes back goes) for the update hook."""
    texts = {v: t(v) for v in (0, 1, 2, 3, 5, 9)}
    if None in texts.values() or not s.has("assign"):
        return []
    n, i = texts, "    "
    # read with the variable hooks at their most probable (their own probes pin them): a joint table over
    # assignment too would pass the explorer's limit (400 assignments) in a world with many open hooks
    deps = set(DEPS) - {"hook assign", "hook lookup"} | {"hook position", "hook list_literal"}
    progs: list[str] = []
    v, w = f"zs{k}", f"zw{k}"
    lists = {xs: t(list(xs)) for xs in ((3, 1, 2), (5, 9, 0), (1, 2), ((1, 2), (3, 5)), (2, (1, 0), 3))}
    if name == "list_literal":
        progs += [f"{out}({x})" for x in lists.values() if x is not None]
    elif name == "float_literal" and s.has("float"):
        progs += [f"{out}({x})" for x in ("1.5", "2.25", "10.0", "0.5")]
    elif name == "set_index" and s.has("set_index") and lists[(5, 9, 0)] is not None:
        for at in (0, 1, 2):
            progs.append(_block(s.render("assign", name=v, expr=lists[(5, 9, 0)]),
                                s.render("set_index", name=v, index=n[at], expr=n[3]), f"{out}({v})"))
    elif name == "assign_many" and s.has("assign_many"):
        progs += [_block(s.render("assign_many", names=f"{v}, {w}", exprs=f"{n[1]}, {n[2]}"), f"{out}({x})")
                  for x in (v, w)]
    elif name == "for_many" and s.has("for_many") and lists[((1, 2), (3, 5))] is not None:
        for x in (v, w):
            progs.append(_block(s.render("assign", name=f"zr{k}", expr=n[0]),
                                s.render("for_many", names=f"{v}, {w}", expr=lists[((1, 2), (3, 5))]),
                                i + s.render("assign", name=f"zr{k}", expr=x), f"{out}(zr{k})"))
    elif name == "update":
        for op, args in mutators:
            for xs in ((3, 1, 2), (5, 9, 0)):
                if lists[xs] is not None:
                    progs.append(_block(s.render("assign", name=v, expr=lists[xs]), f"{op}({args.replace('{var}', v)})",
                                        f"{out}({v})"))
    elif name in ("arguments", "returned", "no_return") and s.has("function") and s.has("return"):
        f, ret = f"zf{k}", s.render("return", expr="").rstrip()
        progs += [_block(s.render("function", name=f, params="zp, zq"), i + s.render("return", expr="zp"),
                         f"{out}({f}({n[1]}, {n[2]}))"),
                  _block(s.render("function", name=f, params="zp, zq"), i + s.render("return", expr="zq"),
                         f"{out}({f}({n[1]}, {n[2]}))"),
                  _block(s.render("function", name=f, params="zp"), i + ret, f"{out}({f}({n[5]}))"),
                  _block(s.render("function", name=f, params="zp"), i + s.render("assign", name=v, expr="zp"),
                         f"{out}({f}({n[5]}))")]
        if s.has("pass"):
            progs.append(_block(s.render("function", name=f, params="zp"), i + s.word("pass"), f"{out}({f}({n[5]}))"))
    elif name == "passes" and s.has("for"):
        for xs in ((1,), (1, 2), (1, 2, 3), (1, 2, 3, 5), (1, 2, 3, 5, 9)):
            if t(list(xs)) is not None:
                progs.append(_block(s.render("assign", name=v, expr=n[0]), s.render("for", name=w, expr=t(list(xs))),
                                    i + s.render("assign", name=v, expr=w), f"{out}({v})"))
    elif name in ("branch_order", "else_runs") and s.has("if") and s.has("else"):
        yes, no = s.word("true"), s.word("false")
        progs += [_block(s.render("assign", name=v, expr=n[0]), s.render("if", expr=yes),
                         i + s.render("assign", name=v, expr=n[1]), s.word("else"),
                         i + s.render("assign", name=v, expr=n[2]), f"{out}({v})"),
                  _block(s.render("assign", name=v, expr=n[0]), s.render("if", expr=no),
                         i + s.render("assign", name=v, expr=n[1]), s.word("else"),
                         i + s.render("assign", name=v, expr=n[2]), f"{out}({v})")]
        if s.has("elif"):
            for a, b in ((yes, yes), (no, yes), (yes, no)):
                progs.append(_block(s.render("assign", name=v, expr=n[0]), s.render("if", expr=a),
                                    i + s.render("assign", name=v, expr=n[1]), s.render("elif", expr=b),
                                    i + s.render("assign", name=v, expr=n[2]), s.render("elif", expr=yes),
                                    i + s.render("assign", name=v, expr=n[3]), f"{out}({v})"))
    if name in ("arguments", "returned", "no_return"):  # a call's value passes through the other call hooks
        deps |= {"hook returned"} if name == "arguments" else {"hook arguments"}
    return [(p, deps) for p in progs]
