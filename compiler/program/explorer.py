"""The built-in explorer of program worlds: probes chosen by expected information gain.

It holds the hypothesis space of `hypotheses.py` (the manual's base lines under
generic perturbation families) with a weight per surviving hypothesis. Each call
is a few independent segments, each printing one line that tests one target (an
operator or a hook) in one scope; the segments of a call are chosen greedily by
expected information gain over the target's survivors, weighted by how sure the
explorer is of what the segment relies on (literal encodings, list making,
printing), within the call's unit budget. Every feedback line prunes the
hypotheses it contradicts. At a milestone it states the most probable surviving
hypothesis of every line it believes perturbed, predicts programs by running
them in its believed world, and repairs naive answers (`repair.py`).
"""
from __future__ import annotations

import itertools
import math
import random
import re
import weakref

import attrs

from worldspec.compiler.program.believed import Believed, call, context
from worldspec.compiler.program.controlprobes import STATEMENT_HOOKS, control_programs, statement_programs
from worldspec.compiler.program.hypotheses import build_space
from worldspec.compiler.program.probegen import quote
from worldspec.compiler.program.repair import Repairer, declared_bools, declared_types

PINNED = 0.85  # a dependency this sure is taken as known when a segment is designed or read
INT_VALUES = (0, 1, 2, 3, -1, 1, 2, 3, 4, 0, -3, 5, 7, 10, 12, -7, 97, 64)
STR_VALUES = ("ab cd", "Ab", "aB", "cart car", "120", "-12", "abc", "", "x", "a,b", "Hello world", "7", "ab")
LIST_VALUES = ((3, 1, 2), (), (5, -2, 5, 0), (4, 8, 15, 16), (1, 2, 1), (9,), (2, 2, 7, 1, 3))
STR_LIST_VALUES = (("ab", "cd"), ("x",), ())
MAX_JOINT = 400  # joint assignments a hook segment is read over (more: it waits for its dependencies)
MAX_RUNS = 3000  # program runs one foreign probe may cost the scorer
ARG_TUPLES = 24  # argument tuples drawn per operator (each tried in every scope)
_LINE = re.compile(r"line (\d+)")
_SPACES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # builder -> space (built once per world)


def space_of(world) -> dict:
    """The hypothesis space of a world (built once per compiled world and shared by its variants)."""
    space = _SPACES.get(world.builder)
    if space is None:
        space = build_space(world)
        _SPACES[world.builder] = space
    return space


@attrs.frozen
class Segment:
    """A few program lines that print one line and test one target."""

    target: str
    text: str
    deps: tuple[str, ...]  # targets the design relies on (their most probable hypotheses)
    args: tuple = ()  # operator segments: the argument values
    scope: str = "top"
    hook: bool = False  # hook segments are predicted by running the program under each hypothesis


def entropy(masses) -> float:
    total = sum(masses)
    if total <= 0:
        return 0.0
    return -sum(m / total * math.log2(m / total) for m in masses if m > 0)


class Explorer:
    """The explorer's state over one trajectory: weights of surviving hypotheses, and its probes."""

    def __init__(self, world, seed: int = 0):
        self.world = world
        self.seed = seed
        self.space = space_of(world)
        self.by_id = {h.id: h for hs in self.space.values() for h in hs}
        self.weights = {t: {h.id: h.weight for h in hs} for t, hs in self.space.items()}
        self.believed = Believed(world)
        self.surface = world.surface
        self.out = self.surface.word("output")
        self.base = world.builder.base
        self.list_maker = next((d.name for d in self.base.values() if d.kind == "op" and d.returns.name == "list"
                                and d.params and d.params[-1].variadic), None)
        self.raw_cache: dict[tuple, dict] = {}  # (target, args, scope) -> {hypothesis id: outcome}
        self.pending: dict[str, tuple[Segment, ...]] = {}  # own probe text -> its segments
        self.calls = 0
        self.unexplained: set = set()  # (target, segment text) whose output no hypothesis explains
        self._best: dict = {}
        self._answers: dict = {}  # (task id, believed ids) -> answer
        self._repairers: dict = {}  # believed ids -> Repairer  # target -> its most probable survivor (cleared when weights change)
        self._keys: dict = {}  # (segment text, believed ids, target survivors) -> outcome keys
        self._texts: dict = {}  # (value, believed literal ids) -> text
        rng = random.Random(f"explorer:{world.name}:{seed}")
        self.arg_tuples = {t: self._arg_tuples(d, rng) for t, d in self.base.items() if d.kind == "op"}

    # ------------------------------------------------------------ beliefs

    def survivors(self, target: str) -> list:
        return [self.by_id[i] for i in self.weights[target]]

    def best(self, target: str):
        """The most probable surviving hypothesis of a target."""
        hit = self._best.get(target)
        if hit is None:
            w = self.weights[target]
            hit = self._best[target] = self.by_id[max(w, key=lambda i: (w[i], -len(i)))]
        return hit

    def certainty(self, target: str) -> float:
        w = self.weights.get(target)
        if not w:
            return 1.0
        return max(w.values()) / sum(w.values())

    def believed_world(self, override=None):
        """The world of the most probable hypotheses (with `override` in force instead, if given)."""
        chosen = {t: self.best(t) for t in self.weights}
        if override is not None:
            chosen[override.target] = override
        return self.believed.world(chosen.values())

    def map_ids(self) -> frozenset:
        """The ids of the most probable hypotheses (the believed world's identity)."""
        return frozenset(self.best(t).id for t in self.weights)

    def bits(self) -> float:
        """The entropy left in the space (bits, summed over targets)."""
        return sum(entropy(w.values()) for w in self.weights.values())

    def prune(self, target: str, keep) -> float:
        """Keep only these hypothesis ids of a target (when any survive); the bits removed. `keep` may map
        ids to marginal masses: the kept hypotheses are then reweighted in proportion to them."""
        w = self.weights.get(target, {})
        kept = {i: w[i] for i in keep if i in w}
        if not kept:
            return 0.0
        before, after = sum(w.values()), sum(kept.values())
        if isinstance(keep, dict) and len(kept) > 1:
            scale = sum(keep[i] for i in kept)
            if scale > 0:
                kept = {i: after * keep[i] / scale for i in kept}
        self.weights[target] = kept
        self._best.pop(target, None)
        return math.log2(before / after)

    # ------------------------------------------------------------ writing values

    def _int_text(self, v: int, world) -> str | None:
        hook = world.sem.hooks.get("int_literal")
        if hook is None:
            return str(v)
        for n in sorted(range(-600, 600), key=abs):
            try:
                if hook(world_ctx(), [n]) == v:
                    return str(n)
            except Exception:  # noqa: BLE001 — a candidate literal the hook rejects
                continue
        return None

    def _str_text(self, v: str, world) -> str | None:
        hook = world.sem.hooks.get("str_literal")
        if hook is None:
            return quote(v)
        for cand in (v, v[::-1], v.swapcase()):
            try:
                if hook(world_ctx(), [cand]) == v:
                    return quote(cand)
            except Exception:  # noqa: BLE001
                continue
        return None

    def text_of(self, v, world) -> str | None:
        """Program text that denotes the value v in a believed world (None when it cannot be written)."""
        key = (repr(v), world.sem.applied)
        if key not in self._texts:
            self._texts[key] = self._text_of(v, world)
        return self._texts[key]

    def _text_of(self, v, world) -> str | None:
        if v is True or v is False:
            return self.surface.word("true" if v else "false")
        if isinstance(v, int):
            return self._int_text(v, world)
        if isinstance(v, str):
            return self._str_text(v, world)
        if isinstance(v, (list, tuple)):
            if self.list_maker is None:  # the syntax's own list literal, when it has one
                if not self.surface.has("list"):
                    return None
                parts = [self.text_of(x, world) for x in v]
                return None if None in parts else f"[{', '.join(parts)}]"
            op = world.sem.ops[self.list_maker]
            for order in (list(v), list(v)[::-1]):
                try:
                    if list(op(world_ctx(), order)) != list(v):
                        continue
                except Exception:  # noqa: BLE001
                    continue
                parts = [self.text_of(x, world) for x in order]
                if None in parts:
                    return None
                return f"{self.list_maker}({', '.join(parts)})"
        return None

    def deps_of(self, values) -> tuple[str, ...]:
        """The targets that writing these values relies on."""
        out = set()
        for v in values:
            if v is True or v is False:
                continue
            if isinstance(v, int):
                out.add("hook int_literal")
            elif isinstance(v, str):
                out.add("hook str_literal")
            elif isinstance(v, (list, tuple)):
                out.add(f"op {self.list_maker}")
                out |= set(self.deps_of(v))
        return tuple(sorted(t for t in out if t in self.weights))

    # ------------------------------------------------------------ candidate segments

    def _arg_tuples(self, d, rng) -> list[tuple]:
        pools = {"int": INT_VALUES, "str": STR_VALUES, "list": LIST_VALUES, "bool": (True, False)}
        pools["any"] = (*INT_VALUES[:6], *STR_VALUES[:6], *LIST_VALUES[:4], True)
        out = []
        for k in range(ARG_TUPLES * 3):
            args, seen = [], {}
            for p in d.params:
                if p.type.name == "fn":
                    return []
                pool = pools.get(p.type.name, pools["any"])
                if p.type.name == "list" and p.type.arg is not None and p.type.arg.name == "str":
                    pool = STR_LIST_VALUES
                if p.variadic:
                    args += [rng.choice(pools["int"]) for _ in range(rng.randint(0, 3))]
                elif k % 3 == 1 and p.type.name in seen:
                    args.append(seen[p.type.name])
                elif k % 3 == 2 and isinstance(seen.get(p.type.name), str):  # differs only in letter case
                    args.append(seen[p.type.name].swapcase())
                else:
                    args.append(rng.choice(pool))
                    seen.setdefault(p.type.name, args[-1])
            t = tuple(args)
            if t not in out:
                out.append(t)
            if len(out) >= ARG_TUPLES:
                break
        return out

    def _raw(self, target: str, args: tuple, scope: str) -> dict:
        key = (target, args, scope)
        hit = self.raw_cache.get(key)
        if hit is None:
            hit = {}
            for h in self.space[target]:
                if scope != "top" and not h.unit.uses_ctx:
                    continue  # same as at top level: looked up there
                status, value = call(h, [list(a) if isinstance(a, tuple) else a for a in args], scope)
                hit[h.id] = ("error",) if status == "error" else ("ok", repr(value))
            self.raw_cache[key] = hit
        return hit

    def outcome_keys(self, seg: Segment) -> dict:
        """Hypothesis id -> a key of what the segment shows under it (survivors only)."""
        survivors = self.weights[seg.target]
        if seg.hook:
            key = (seg.target, seg.text, self.map_ids(), len(survivors))
            if key not in self._keys:
                self._keys[key] = {i: run_key(self.believed_world(self.by_id[i]), seg.text) for i in survivors}
            return self._keys[key]
        raw = self._raw(seg.target, seg.args, seg.scope)
        top = self._raw(seg.target, seg.args, "top") if seg.scope != "top" else raw
        return {i: raw.get(i, top.get(i)) for i in survivors}

    def op_segments(self, target: str, k: int, world) -> list[Segment]:
        d = self.base[target]
        scopes = ["top"]
        if any(h.unit.uses_ctx for h in self.survivors(target)):
            scopes += [s for s in ("in_function", "in_loop") if self._scope_ok(s)]
        out = []
        for args in self.arg_tuples.get(target, ()):
            texts = [self.text_of(a, world) for a in args]
            if None in texts:
                continue
            expr = f"{d.name}({', '.join(texts)})"
            deps = set(self.deps_of(args)) | {"hook show", "hook output"}
            for scope in scopes:
                text, more = self.wrap(expr, scope, k, world)
                if text is None:
                    continue
                out.append(Segment(target, text, tuple(sorted((deps | more) & set(self.weights))), args, scope))
        return out

    def _scope_ok(self, scope: str) -> bool:
        keys = ("function", "return") if scope == "in_function" else ("for", "assign")
        return all(self.surface.has(k) for k in keys) and (self.list_maker is not None or self.surface.has("list"))

    def one_list(self, text: str) -> str:
        """A one-element list of the element text: the list-making operator's call or the list literal."""
        return f"{self.list_maker}({text})" if self.list_maker else f"[{text}]"

    def wrap(self, expr: str, scope: str, k: int, world) -> tuple[str | None, set]:
        """One-line-printing program text that evaluates expr in a scope (and the targets it adds)."""
        s, out = self.surface, self.out
        if scope == "top":
            return f"{out}({expr})", set()
        if scope == "in_function":
            lines = [s.render("function", name=f"zf{k}", params=""), "    " + s.render("return", expr=expr),
                     f"{out}(zf{k}())"]
            return "\n".join(lines), set()
        zero = self.text_of(0, world)
        if zero is None:
            return None, set()
        lines = [s.render("assign", name=f"zr{k}", expr=zero),
                 s.render("for", name=f"zq{k}", expr=self.one_list(zero)),
                 "    " + s.render("assign", name=f"zr{k}", expr=expr), f"{out}(zr{k})"]
        return "\n".join(lines), {"hook iterate", "hook assign", "hook lookup", f"op {self.list_maker}",
                                  "hook int_literal"}

    def hook_segments(self, target: str, k: int, world) -> list[Segment]:
        """Small programs that show one hook (each prints one line)."""
        name = target.split(" ", 1)[1]
        s, out = self.surface, self.out
        t = lambda v: self.text_of(v, world)  # noqa: E731
        yes, no = s.word("true"), s.word("false")
        progs: list[tuple[str, set]] = []
        if name == "int_literal":
            progs += [(f"{out}({n})", set()) for n in (0, 5, 1, 100, -3, 64, 40)]
        elif name == "str_literal":
            progs += [(f"{out}({quote(v)})", set()) for v in ("ab c", "Ab", "xyz")]
        elif name == "output":
            none = s.word("none")
            progs += [(f"{out}({yes}, {no})", set()), (f"{out}({no}, {none}, {yes})", set())]
        elif name == "show":
            progs += [(f"{out}({yes})", set()), (f"{out}({s.word('none')})", set())]
            for v in ((1, "a"), (), (2, 3)):
                if t(v) is not None:
                    progs.append((f"{out}({t(v)})", set(self.deps_of([v]))))
        elif name == "truthy" and s.has("if") and s.has("assign"):
            for v in (-2, 0, 3, "", (), "a", -1, 1, 2):
                if None not in (t(v), t(0), t(1)):
                    progs.append(("\n".join([s.render("assign", name=f"zt{k}", expr=t(0)),
                                             s.render("if", expr=t(v)),
                                             "    " + s.render("assign", name=f"zt{k}", expr=t(1)),
                                             f"{out}(zt{k})"]),
                                  {"hook int_literal", "hook assign", "hook lookup", *self.deps_of([v])}))
        elif name == "iterate" and s.has("for") and s.has("assign"):
            for v in ("ab cd", "xy", (1, 2, 3)):
                if t(v) is not None and t(0) is not None:
                    progs.append(("\n".join([s.render("assign", name=f"zi{k}", expr=t(0)),
                                             s.render("for", name=f"zc{k}", expr=t(v)),
                                             "    " + s.render("assign", name=f"zi{k}", expr=f"zc{k}"),
                                             f"{out}(zi{k})"]),
                                  {"hook int_literal", "hook assign", "hook lookup", *self.deps_of([v])}))
        elif name in ("assign", "lookup") and s.has("assign"):
            progs += self._binding_programs(k, world)
        elif name in ("position", "loop_else", "jump", "enclosed"):
            progs += control_programs(name, s, k, t, out)
        elif name in STATEMENT_HOOKS:
            progs += statement_programs(name, s, k, t, out, self.mutators(world))
        deps_all = {"hook show", "hook output"}
        return [Segment(target, text, tuple(sorted((deps | deps_all) & set(self.weights) - {target})), hook=True)
                for text, deps in progs]

    def mutators(self, world) -> list[tuple[str, str]]:
        """(operator, its arguments' text with `{var}` for the variable it writes back) for every operator the
        manual says stores its result back when called on a line of its own (the update hook's probes)."""
        out = []
        for target, d in self.base.items():
            if d.kind != "op" or not getattr(d, "mutates", None) or getattr(d, "updates", None) is not None:
                continue
            for args in self.arg_tuples.get(target, ())[:1]:
                texts = ["{var}" if p.name == d.mutates else self.text_of(a, world) for p, a in zip(d.params, args)]
                if None not in texts:
                    out.append((d.name, ", ".join(texts)))
        return out

    def _binding_programs(self, k: int, world) -> list[tuple[str, set]]:
        s, out = self.surface, self.out
        t = lambda v: self.text_of(v, world)  # noqa: E731
        yes = s.word("true")
        if None in (t(-3), t(0)):
            return []
        deps = {"hook int_literal", "hook assign", "hook lookup"}  # every one of them stores and reads
        a, g = f"za{k}", f"zg{k}"
        progs = [("\n".join([s.render("assign", name=a, expr=t(-3)), f"{out}({a})"]), deps),
                 ("\n".join([s.render("assign", name=a, expr=yes), f"{out}({a})"]), deps)]
        if s.has("for") and (self.list_maker or s.has("list")):
            progs += [("\n".join([s.render("assign", name=a, expr=t(0)),
                                  s.render("for", name=f"zq{k}", expr=self.one_list(t(0))),
                                  "    " + s.render("assign", name=a, expr=t(-3)), f"{out}({a})"]),
                       deps | {f"op {self.list_maker}", "hook iterate"}),
                      ("\n".join([s.render("for", name=a, expr=self.one_list(t(-3))),
                                  "    " + s.render("assign", name=f"zb{k}", expr=a), f"{out}({a})"]),
                       deps | {f"op {self.list_maker}", "hook iterate"})]
        if s.has("function") and s.has("return"):
            progs += [("\n".join([s.render("function", name=g, params="zp"), "    " + s.render("return", expr="zp"),
                                  f"{out}({g}({yes}))"]), deps),
                      ("\n".join([s.render("function", name=g, params="zp"), "    " + s.render("return", expr="zp"),
                                  f"{out}({g}({t(-3)}))"]), deps),
                      ("\n".join([s.render("assign", name=a, expr=yes),
                                  s.render("function", name=g, params=""), "    " + s.render("return", expr=a),
                                  f"{out}({g}())"]), deps)]
        return progs

    # ------------------------------------------------------------ choosing probes

    def gain(self, seg: Segment) -> float:
        """Expected bits the segment removes: over its target's survivors (operators, whose dependencies
        must be pinned), or over the joint assignments of a hook segment's open targets."""
        if seg.hook:
            table = self.joint_table(seg)
            if table is None:
                return 0.0
            # the bits factorised pruning would remove, for each outcome, weighted by its probability
            masses: dict = {}
            members: dict = {}
            for combo, key in table:
                masses[key] = masses.get(key, 0.0) + math.prod(self.weights[h.target][h.id] for h in combo)
                for h in combo:
                    members.setdefault(key, set()).add(h.id)
            total = sum(masses.values())
            if total <= 0:
                return 0.0
            expected = 0.0
            for key, m in masses.items():
                for t in self.open_deps(seg):
                    w = self.weights[t]
                    kept = sum(w[i] for i in members[key] if i in w)
                    if kept > 0:
                        expected += m / total * math.log2(sum(w.values()) / kept)
            return expected
        if not all(self.certainty(d) >= PINNED for d in seg.deps):
            return 0.0
        keys = self.outcome_keys(seg)
        w = self.weights[seg.target]
        masses = {}
        for i, key in keys.items():
            masses[key] = masses.get(key, 0.0) + w[i]
        return entropy(masses.values())

    def joint_table(self, seg: Segment):
        """[(combo, outcome key)] over the joint assignments of the segment's open targets (None: too many)."""
        targets = self.open_deps(seg)
        if math.prod(len(self.weights[t]) for t in targets) > MAX_JOINT:
            return None
        others = frozenset(self.best(t).id for t in self.weights if t not in targets)
        key = (seg.text, others, tuple(frozenset(self.weights[t]) for t in targets))
        if key not in self._keys:
            rows = []
            for combo in itertools.product(*(self.survivors(t) for t in targets)):
                chosen = {t: self.best(t) for t in self.weights}
                chosen.update({h.target: h for h in combo})
                rows.append((combo, run_key(self.believed.world(chosen.values()), seg.text)))
            self._keys[key] = rows
        return self._keys[key]

    def candidates(self, k: int, world) -> list[Segment]:
        out = []
        for target in self.weights:
            if len(self.weights[target]) <= 1:
                continue
            kind = target.split(" ", 1)[0]
            out += self.hook_segments(target, k, world) if kind == "hook" else self.op_segments(target, k, world)
        return out

    def best_segment(self, target: str, k: int, world, cost_cap: int):
        """(gain, units, segment) of the best segment for one target within cost_cap units (or None)."""
        kind = target.split(" ", 1)[0]
        segs = self.hook_segments(target, k, world) if kind == "hook" else self.op_segments(target, k, world)
        best = None
        for seg in segs:
            if (seg.target, seg.text) in self.unexplained:
                continue
            # the gain first: a segment that cannot win (units are at least 1) is never parsed to be charged
            g = self.gain(seg)
            if g <= 1e-9 or (best is not None and g <= best[0] / best[1] + 1e-12):
                continue
            units = self.world.charge(seg.text)
            if 0 < units <= cost_cap and (best is None or g / units > best[0] / best[1] + 1e-12):
                best = (g, units, seg)
        return best

    def plan(self, cap: int) -> tuple[tuple[Segment, ...], float]:
        """The segments of highest expected gain per unit within cap units, one per target, and the bits
        they are expected to remove."""
        world = self.believed_world()
        scored = []
        for target in sorted(self.weights):
            if len(self.weights[target]) > 1:
                b = self.best_segment(target, 0, world, cap)
                if b is not None:
                    scored.append((b[0] / b[1], target))
        scored.sort(key=lambda x: -x[0])
        chosen: list[Segment] = []
        left, expected = cap, 0.0
        for _, target in scored:
            if left <= 0:
                break
            b = self.best_segment(target, len(chosen), world, left)
            if b is not None:
                chosen.append(b[2])
                left -= b[1]
                expected += b[0]
        return tuple(chosen), expected

    def next_probe(self) -> str:
        """The next call's program: segments of the highest expected gain per unit, one per target."""
        chosen, _ = self.plan(self.world.budget.units_per_call)
        if not chosen:  # nothing left to learn: spend the call on a check of the believed world
            world = self.believed_world()
            chosen = (Segment("", f"{self.out}({self.text_of(1, world) or '1'})", (), hook=True),)
        self.calls += 1
        return self.register(chosen)

    def register(self, segs) -> str:
        """The program of these segments, remembered so that its feedback is read segment by segment."""
        text = "\n".join(seg.text for seg in segs)
        self.pending[text] = tuple(segs)
        return text

    # ------------------------------------------------------------ any program (a model's probes)

    def targets_in(self, program: str) -> list[str]:
        """The targets a program may exercise: every hook, and the operators it names."""
        names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?=\s*\()", program))
        return [t for t in self.weights if t.startswith("hook ") or t.split(" ", 1)[1] in names]

    def observe_program(self, program: str, feedback: str) -> float:
        """Prune on the feedback of any program: one target at a time, the others at their most probable
        hypotheses (a probe that leaves several targets open shows too little to prune any of them)."""
        bits, runs = 0.0, 0
        for t in sorted(self.targets_in(program), key=lambda t: (len(self.weights[t]), t)):
            ids = list(self.weights[t])
            if len(ids) <= 1:
                continue
            if runs + len(ids) > MAX_RUNS:
                break
            runs += len(ids)
            keep = [i for i in ids if self.believed_world(self.by_id[i]).probe(program).text == feedback]
            bits += self.prune(t, keep)
        return bits

    def snapshot(self) -> dict:
        """The beliefs as they stand: weights and unexplained segments (restore() puts them back)."""
        return {"weights": {t: dict(w) for t, w in self.weights.items()}, "unexplained": set(self.unexplained)}

    def restore(self, state: dict) -> None:
        """Return to a snapshot's beliefs."""
        self.weights = {t: dict(w) for t, w in state["weights"].items()}
        self.unexplained = set(state["unexplained"])
        self._best.clear()

    # ------------------------------------------------------------ reading feedback

    def observe(self, program: str, feedback: str) -> float:
        """Prune on one call's feedback; the bits removed. Its own probes are read segment by segment,
        any other program as a whole (observe_program)."""
        segs = self.pending.get(program)
        if segs is None:
            return self.observe_program(program, feedback)
        return sum(self.prune(target, keep) for target, keep in self.readings(segs, feedback))

    def readings(self, segs, feedback: str):
        """(segment, ids consistent with what it printed) for every segment the feedback shows."""
        world = self.believed_world()
        lines = feedback.split("\n") if feedback and feedback != "(no output)" else []
        if any("[feedback truncated]" in x for x in lines) or lines[:1] and lines[0].startswith("rejected"):
            return []
        failed_at = None
        if lines and re.match(r"(error|limit): ", lines[-1]):
            m = _LINE.search(lines[-1])
            failed_at = int(m.group(1)) if m else None
            lines = lines[:-1]
        out, start = [], 1
        for n, seg in enumerate(segs):
            end = start + seg.text.count("\n")
            if failed_at is not None and start <= failed_at <= end:
                seen = ("error",)
            elif n < len(lines) and (failed_at is None or end < failed_at):
                seen = ("ok", lines[n])
            else:
                break
            if seg.target not in self.weights:  # a check that tests no target
                read = [("", [])]
            elif seg.hook:
                read = self.joint(seg, seen)
            elif all(self.certainty(d) >= PINNED for d in seg.deps):
                read = [(seg.target, self.consistent(seg, seen, world))]
            else:
                read = []
            if not any(keep for _, keep in read):
                self.unexplained.add((seg.target, seg.text))  # nothing fits: never asked again
            out += read
            start = end + 1
        if failed_at is None and len(lines) != len(segs):
            return []  # the lines do not pair with the segments: read nothing
        return out

    def open_deps(self, seg: Segment) -> list[str]:
        """The targets a hook segment is read jointly over: its own and its unpinned dependencies."""
        return [seg.target] + [d for d in seg.deps if self.certainty(d) < PINNED]

    def joint_size(self, seg: Segment) -> int:
        return math.prod(len(self.weights[t]) for t in self.open_deps(seg))

    def joint(self, seg: Segment, seen: tuple) -> list[tuple[str, dict]]:
        """(target, {id: weight}) for the segment's target and open dependencies: the hypotheses that take
        part in some joint assignment under which the segment shows what was seen, each weighted by the
        mass of those assignments (its marginal); nothing when the table is too large or nothing fits."""
        table = self.joint_table(seg)
        if table is None:
            return []
        keep: dict[str, dict] = {t: {} for t in self.open_deps(seg)}
        for combo, key in table:
            if key == seen:
                mass = math.prod(self.weights[h.target][h.id] for h in combo)
                for h in combo:
                    keep[h.target][h.id] = keep[h.target].get(h.id, 0.0) + mass
        if not any(keep.values()):
            return []
        return list(keep.items())

    def consistent(self, seg: Segment, seen: tuple, world) -> list[str]:
        """The surviving hypotheses of the segment's target under which it shows what was seen."""
        if seg.hook:
            keys = self.outcome_keys(seg)
            return [i for i, key in keys.items() if key == seen]
        keep = []
        for h in self.survivors(seg.target):
            status, value = call(h, [list(a) if isinstance(a, tuple) else a for a in seg.args], seg.scope)
            if status == "error":
                if seen == ("error",):
                    keep.append(h.id)
                continue
            if seg.scope == "in_loop":
                value = through_binding(world, value)
            if seen[0] == "ok" and world.render(value).rstrip() == seen[1].rstrip():
                keep.append(h.id)
        return keep

    # ------------------------------------------------------------ milestones

    def report_lines(self) -> list[str]:
        """The most probable surviving hypothesis of every line believed perturbed (equation notation)."""
        return [self.best(t).line() for t in self.weights if not self.best(t).is_base]

    def report(self) -> str:
        """The rule report (one line per hypothesis believed to differ from the manual, or UNKNOWN)."""
        return "\n".join(self.report_lines()) or "UNKNOWN"

    def answer(self, task) -> str:
        """A task's answer: a prediction runs the task's program in the believed world; a program or
        function task gets its naive answer repaired for the believed world (repair.py)."""
        if task.shape == "predict":
            blocks = re.findall(r"```[a-z]*\n(.*?)```", task.prompt, re.S)
            return self.predict(blocks[-1]) if blocks else ""
        if not task.naive:
            return ""
        key = (task.id, self.map_ids())
        if key not in self._answers:
            repairer = self._repairers.get(self.map_ids())
            if repairer is None:
                repairer = self._repairers[self.map_ids()] = Repairer(self)
            self._answers[key] = repairer.repair(task.naive, declared_bools(task.prompt),
                                                     declared_types(task.prompt))
        return self._answers[key]

    def predict(self, program: str) -> str:
        """A program's output in the believed world (with its error line, as a prediction shows it)."""
        r = self.believed_world().execute(program)
        return "\n".join(list(r.lines) + ([r.error] if r.error else []))


def run_key(world, text: str) -> tuple:
    """What a program shows in a world: ("ok", its lines) or ("error",)."""
    r = world.execute(text)
    return ("error",) if r.error else ("ok", "\n".join(r.lines))


def world_ctx():
    """A context for calling a believed world's hook outside any program (top level)."""
    return context("top")


def through_binding(world, value):
    """A value as a loop body's assignment stores it and a later read returns it."""
    assign, lookup = world.sem.hooks.get("assign"), world.sem.hooks.get("lookup")
    loop, top = context("in_loop"), context("top")
    if assign is not None:
        value = assign(loop, ["zr", value])
    if lookup is not None:
        value = lookup(top, ["zr", value])
    return value
