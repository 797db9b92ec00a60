"""The bounded certifier: is a sequent provable with formulas from a finite universe?

Bounds (declared per task in a spec's `bounds` block):

    size       the largest formula a proof may contain (atoms and falsum count 1,
               each connective and quantifier 1)
    depth      how deeply subproofs may nest
    lines      the longest proof a found witness may have
    nodes      how many rule-instance tests the search may spend
    constants  how many new constants (eigenvariables, arbitrary witnesses) exist
               besides the sequent's own terms

The universe is the sequent's subformulas (quantifier bodies instantiated with
every term of the pool), falsum, and the negation and double negation of each,
all of size at most `size`; a proof is within bounds when every line's formula is in the universe
and its subproofs nest at most `depth` deep.

The search saturates: for each context (the open assumptions, as a path of
subproofs) it computes every universe formula derivable there, firing rule
instances until nothing changes. Subproof contexts are opened on demand, when a
discharging instance's other premises are already derived. Line-level side
conditions are honoured exactly: a `distinct` instance whose two premises are the
same formula needs that formula on two lines (it must be derivable by a rule,
not only assumed), `nontrivial` needs a subproof line after the assumption,
`fresh c` needs c absent from the context's premises and assumptions, and
`once` and `ordered` never change what is derivable (a subproof can be written
twice, citations reordered). Saturation covers proofs of any length, so "not
found" within the node bound certifies that no proof within the size and depth
bounds exists at all (in particular none within `lines`).

When the goal is found, `extract` writes an actual Fitch proof from the
recorded reasons, which callers re-check with the checker.
"""
from __future__ import annotations

import attrs

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.schema import DELAYED, Schema, build, constant_metas, match, resolve, unbound_terms


@attrs.frozen
class Bounds:
    size: int = 6
    depth: int = 2
    lines: int = 24
    nodes: int = 2_000_000
    constants: int = 2

    def as_dict(self) -> dict:
        return attrs.asdict(self)


INSTANCE_LIMIT = 200_000


@attrs.frozen
class Outcome:
    found: bool
    complete: bool  # True: the search ran to its fixpoint within the node bound
    nodes: int
    universe: int
    contexts: int
    proof: str = ""  # a proof of the goal, when found and extractable

    @property
    def certified_unprovable(self) -> bool:
        return self.complete and not self.found


# ---------------------------------------------------------------- universe


def universe(premises, goal, bounds: Bounds, extra=()) -> tuple[list, list]:
    """(formulas, term pool) of the bounded search for premises |- goal."""
    seeds = list(premises) + [goal] + list(extra)
    pool: dict = {}
    for f in seeds:
        for t in sorted(F.terms_of(f), key=repr):
            pool.setdefault(t, None)
    used = set()
    for f in seeds:
        F.constants(f, used)
    k, n = 0, 1
    while k < bounds.constants:
        name = f"c{n}"
        n += 1
        if name not in used:
            pool.setdefault(("c", name), None)
            k += 1
    terms = list(pool)
    out: dict = {}

    def add(f, seed=False):
        if f in out or (F.size(f) > bounds.size and not seed) or not F.is_closed(f):
            return
        out[f] = None
        tag = f[0]
        if tag == "not":
            add(f[1])
        elif tag in F.BINARY:
            add(f[1])
            add(f[2])
        elif tag in F.QUANT:
            for t in terms:
                add(F.instantiate(f[1], t))

    for f in seeds:
        add(f, seed=True)
    add(F.BOT)
    if any(("=", 2) in F.predicates(f) for f in seeds):
        for t in terms:
            add(("atom", "=", (t, t)))
    for f in list(out):
        neg = ("not", f)
        for g in (neg, ("not", neg)):
            if F.size(g) <= bounds.size:
                out.setdefault(g, None)
    return list(out), terms


# ---------------------------------------------------------------- instances


@attrs.frozen
class Instance:
    rule: str
    lines: tuple  # formula indices, schema order
    subs: tuple  # (assumption index, conclusion index)
    conc: int
    fresh: frozenset  # constant names that must be fresh in the context
    dup: int  # a formula index cited twice under `distinct` (-1: none)
    nontrivial: bool
    # the line premises as one bit mask: the saturation loop tests them all with one `&`
    linemask: int = attrs.field(init=False, eq=False, repr=False)

    @linemask.default
    def _linemask(self) -> int:
        m = 0
        for i in self.lines:
            m |= 1 << i
        return m


# A rule's instances over a universe, kept between searches: a certification searches one task
# under many rule tables that differ in one rule (each knockout of `requires`), so all but one
# rule's instances are already known. Bounded; keyed by content (the universe's formulas, the
# rule id and its schema), so a hit is the very list the enumeration would build.
_RULE_INSTANCES: dict = {}  # universe formulas -> {(rule id, schema): instances}
_RULE_INSTANCES_MAX = 512


def instances(rules: dict[str, Schema], formulas: list, limit: int = 200_000) -> list[Instance]:
    """Every instance of every rule whose formulas all lie in the universe."""
    universe_key = tuple(formulas)
    known = _RULE_INSTANCES.get(universe_key)
    if known is None:
        if len(_RULE_INSTANCES) >= _RULE_INSTANCES_MAX:
            _RULE_INSTANCES.clear()
        known = _RULE_INSTANCES[universe_key] = {}
    lookup = None  # (index, buckets), built on the first rule not yet known
    out: list[Instance] = []
    for rid, schema in rules.items():
        mine = known.get((rid, schema))
        if mine is None:
            if lookup is None:
                lookup = _lookup(formulas)
            mine = known[(rid, schema)] = _rule_instances(rid, schema, *lookup, limit)
        out.extend(mine)
        if len(out) > limit:
            return out[:limit + 1]
    return out


def _lookup(formulas: list) -> tuple[dict, dict]:
    """(formula -> index, candidates by head) over a universe, for matching rule patterns."""
    index = {f: i for i, f in enumerate(formulas)}
    buckets: dict = {}
    for f in formulas:
        key = (f[0], f[1]) if f[0] == "atom" else f[0]
        buckets.setdefault(key, []).append(f)
        buckets.setdefault("*", []).append(f)
    return index, buckets


def _rule_instances(rid: str, schema: Schema, index: dict, buckets: dict, limit: int) -> list[Instance]:
    """One rule's instances (at most limit + 1), in enumeration order."""
    out: list[Instance] = []
    seen = set()
    pats = list(schema.lines) + [p for ac in schema.subs for p in ac] + [schema.conclusion]
    order = sorted(range(len(pats)), key=lambda i: (pats[i][0] in ("meta", "subst"), -F.size(pats[i])
                                                    if pats[i][0] not in ("meta", "subst") else 0))
    for sigma in _enumerate([pats[i] for i in order], 0, {}, index, buckets):
        forms = [build(p, sigma) for p in pats]
        if any(f is None or f not in index for f in forms):
            continue
        nl = len(schema.lines)
        lines = tuple(index[f] for f in forms[:nl])
        subs = tuple((index[forms[nl + 2 * k]], index[forms[nl + 2 * k + 1]]) for k in range(len(schema.subs)))
        conc = index[forms[-1]]
        fresh = set()
        bad = False
        for c in schema.fresh:
            v = sigma.get(c)
            if v is None:
                continue
            fresh.add(v[1])
            if c not in constant_metas(schema.conclusion) and v[1] in F.constants(forms[-1]):
                bad = True
            for p, f in zip(schema.lines, forms[:nl]):
                if c not in constant_metas(p) and v[1] in F.constants(f):
                    bad = True
        if bad:
            continue
        dup = -1
        if schema.distinct and len(set(lines)) < len(lines):
            dups = [i for i in lines if lines.count(i) > 1]
            if len(set(dups)) > 1 or lines.count(dups[0]) > 2:
                continue  # needs three copies: not modelled, and never useful
            dup = dups[0]
        key = (lines, subs, conc, frozenset(fresh))
        if key in seen:
            continue
        seen.add(key)
        out.append(Instance(rid, lines, subs, conc, frozenset(fresh), dup, schema.nontrivial))
        if len(out) > limit:
            return out
    return out


def _enumerate(pats, i, sigma, index, buckets):
    if i == len(pats):
        s = dict(sigma)
        if DELAYED in s:
            s[DELAYED] = list(s[DELAYED])
        if resolve(s):
            yield s
        return
    p = pats[i]
    if p[0] not in ("meta", "subst") or (p[0] == "meta" and p[1] in sigma):
        f = build(p, sigma) if _ready(p, sigma) else None
        if f is not None:
            if f in index:
                yield from _enumerate(pats, i + 1, sigma, index, buckets)
            return
    key = "*" if p[0] in ("meta", "subst") else ((p[0], p[1]) if p[0] == "atom" else p[0])
    for cand in buckets.get(key, ()):
        s = dict(sigma)
        if DELAYED in s:
            s[DELAYED] = list(s[DELAYED])
        if match(p, cand, s):
            yield from _enumerate(pats, i + 1, s, index, buckets)


def _ready(p, sigma) -> bool:
    missing: set = set()
    unbound_terms(p, sigma, missing)
    return not missing and build(p, sigma) is not None


# ---------------------------------------------------------------- saturation


class _Ctx:
    __slots__ = ("id", "parent", "assume", "depth", "mask", "rmask", "occupied", "reason", "rreason",
                 "stamp", "children", "alias", "seen", "rseen", "fresh", "pending", "listeners")

    def __init__(self, cid, parent, assume, depth, occupied):
        self.id = cid
        self.parent = parent
        self.assume = assume  # formula index (-1 for the main proof)
        self.depth = depth
        self.mask = 0
        self.rmask = 0  # formulas derivable by a rule here (so they can sit on two lines)
        self.occupied = occupied  # constant names in the premises and open assumptions
        self.reason: dict = {}
        self.rreason: dict = {}
        self.stamp: dict = {}
        self.children: dict = {}
        self.alias = None  # the context this one equals (its assumption was already derivable)
        self.seen = 0  # mask and rmask when this context was last examined (semi-naive passes)
        self.rseen = 0
        self.fresh = True  # not examined yet: every instance is a candidate
        self.pending: set = set()  # instances to test again here (a subproof they wait on grew)
        self.listeners: list = []  # (context, instance) waiting for this context to grow


class Search:
    """Saturate premises |- goal under `rules` within `bounds`."""

    def __init__(self, rules: dict[str, Schema], premises, goal, bounds: Bounds, extra=(),
                 notation: F.Notation = F.DEFAULT):
        self.rules = rules
        self.bounds = bounds
        self.notation = notation
        self.premises = list(premises)
        self.goal = goal
        self.formulas, self.terms = universe(premises, goal, bounds, extra)
        self.index = {f: i for i, f in enumerate(self.formulas)}
        self.instances = instances(rules, self.formulas, INSTANCE_LIMIT)
        self.truncated = len(self.instances) > INSTANCE_LIMIT  # too many to search exhaustively
        self.reit = next((rid for rid, s in rules.items() if s.canonical() == "A |- A"), None)
        # semi-naive evaluation: an instance is tested again in a context only when one of its
        # line premises (or its duplicated premise's second line) has appeared there since the
        # last pass, or when a subproof context it waits on has grown.
        self.watch: dict[int, list] = {}
        self.rwatch: dict[int, list] = {}
        self.discharging: list[int] = []  # instances with subproofs (tested in every new context)
        self._watch_from(0)
        self.nodes = 0
        self.contexts: list[_Ctx] = []
        self.clock = 0

    def run(self) -> Outcome:
        root = _Ctx(0, None, -1, 0, frozenset().union(*[F.constants(p) for p in self.premises]))
        for p in self.premises:
            i = self.index[p]
            self._set(root, i, ("premise",), rederivable=False)
        self.contexts = [root]
        return self._saturate()

    def extend(self, rules: dict[str, Schema]) -> Outcome:
        """Add `rules` to a search that has run and saturate again from where it stopped: the
        outcome under the union of the rules (a proof is not extracted).

        For deciding only: a complete run of a superset that misses the goal proves that no subset
        of its rules reaches it (saturation is monotone in the rules), so a leave-one-out caller
        searches afresh only where a superset finds the goal. The node bound counts every run, so an
        extended search is incomplete no later than a fresh search of the union."""
        first = len(self.instances)
        self.instances = self.instances + instances(rules, self.formulas, INSTANCE_LIMIT)
        self.truncated = self.truncated or len(self.instances) > INSTANCE_LIMIT
        self._watch_from(first)
        added = range(first, len(self.instances))
        for ctx in self.contexts:
            if ctx.alias is None and not ctx.fresh:
                ctx.pending.update(added)
        return self._saturate(extract=False)

    def _watch_from(self, first: int) -> None:
        """Index the instances from `first` on: who watches each line, each duplicated line, and
        which discharge subproofs."""
        for n in range(first, len(self.instances)):
            inst = self.instances[n]
            for i in set(inst.lines):
                self.watch.setdefault(i, []).append(n)
            if inst.dup >= 0:
                self.rwatch.setdefault(inst.dup, []).append(n)
            if inst.subs:
                self.discharging.append(n)

    def _saturate(self, extract: bool = True) -> Outcome:
        b = self.bounds
        goal = self.index[self.goal]
        root = self.contexts[0]
        insts = self.instances
        complete = not self.truncated
        changed = True
        while changed and not root.mask >> goal & 1:
            changed = False
            k = 0
            while k < len(self.contexts):
                ctx = self.contexts[k]
                k += 1
                if ctx.alias is not None:
                    continue
                if ctx.parent is not None:  # lines of the enclosing proof stay available (no reason
                    ctx.mask |= ctx.parent.mask  # recorded: a missing reason means "inherited")
                    ctx.rmask |= ctx.parent.rmask
                if ctx.fresh:
                    ctx.fresh = False
                    candidates = range(len(insts))
                else:
                    pick = ctx.pending
                    ctx.pending = set()
                    for i in _bits(ctx.mask & ~ctx.seen):
                        pick.update(self.watch.get(i, ()))
                    for i in _bits(ctx.rmask & ~ctx.rseen):
                        pick.update(self.rwatch.get(i, ()))
                    candidates = sorted(pick)
                start_mask, start_rmask = ctx.seen, ctx.rseen = ctx.mask, ctx.rmask
                for n in candidates:
                    inst = insts[n]
                    if self.nodes >= b.nodes:
                        complete = False
                        changed = False
                        break
                    self.nodes += 1
                    bit = 1 << inst.conc
                    if ctx.rmask & bit:
                        continue
                    mask = ctx.mask
                    need = inst.linemask
                    if mask & need != need:
                        continue
                    if inst.fresh and inst.fresh & ctx.occupied:
                        continue
                    if inst.dup >= 0 and not ctx.rmask >> inst.dup & 1:
                        continue
                    children = []
                    ok = True
                    for a, c in inst.subs:
                        if ctx.depth >= b.depth:
                            ok = False
                            break
                        child = self._child(ctx, a, inst.fresh)
                        eff = child.alias or child
                        need = eff.rmask if (inst.nontrivial and c == a) else eff.mask
                        if not need >> c & 1:
                            eff.listeners.append((ctx, n))
                            ok = False
                            break
                        children.append((child, c))
                    if not ok:
                        continue
                    reason = ("rule", n, tuple(children))
                    if not mask & bit:
                        self._set(ctx, inst.conc, reason, rederivable=True)
                    else:
                        ctx.rmask |= bit
                        ctx.rreason[inst.conc] = reason
                    changed = True
                if (ctx.mask != start_mask or ctx.rmask != start_rmask) and ctx.listeners:
                    for owner, n in ctx.listeners:
                        owner.pending.add(n)
                    ctx.listeners = []
                    changed = True
                if not complete:
                    break
            if not complete:
                break
        found = bool(root.mask >> goal & 1)
        proof = self.extract(root, goal) if found and extract else ""
        return Outcome(found, found or complete, self.nodes, len(self.formulas), len(self.contexts), proof)

    def _set(self, ctx: _Ctx, i: int, reason, rederivable: bool) -> None:
        ctx.mask |= 1 << i
        ctx.reason[i] = reason
        self.clock += 1
        ctx.stamp[i] = self.clock
        if rederivable:
            ctx.rmask |= 1 << i
            ctx.rreason[i] = reason

    def _child(self, ctx: _Ctx, a: int, fresh) -> _Ctx:
        child = ctx.children.get(a)
        if child is not None:
            return child
        occupied = ctx.occupied | F.constants(self.formulas[a])
        child = _Ctx(len(self.contexts), ctx, a, ctx.depth + 1, occupied)
        ctx.children[a] = child
        self.contexts.append(child)
        if self.reit is not None and ctx.rmask >> a & 1:
            child.alias = ctx  # assuming what is already derivable adds nothing
            return child
        child.mask = ctx.mask
        child.rmask = ctx.rmask
        # semi-naive from birth: whatever fires on the enclosing context's lines alone fires there
        # (its constraints are looser: fewer occupied constants, less depth) and is inherited, so a
        # new context tests only the instances watching what it adds (its assumption, later lines)
        # and the discharging instances, whose subproofs open deeper here and may succeed only here.
        child.seen, child.rseen = ctx.mask, ctx.rmask
        child.fresh = False
        child.pending = set(self.discharging)
        if ctx.mask >> a & 1:  # assumed again: this line is the assumption, the other inherited
            child.reason[a] = ("assume",)
        else:
            self._set(child, a, ("assume",), rederivable=False)
        return child

    # ------------------------------------------------------------ extraction

    def extract(self, root: _Ctx, goal: int) -> str:
        """A Fitch proof of the goal from the recorded reasons ('' if none can be written)."""
        try:
            return self._extract(root, goal)
        except (KeyError, RecursionError, _NoProof):
            return ""

    def _extract(self, root: _Ctx, goal: int) -> str:
        needed: dict[int, set] = {}
        self._mark(root, goal, needed)
        out: list = []
        env: dict = {}
        for p in self.premises:
            i = self.index[p]
            if i not in env:
                out.append((0, p, "premise", ()))
                env[i] = len(out)
        self._emit(root, 0, env, needed, out)
        if not out or out[-1][1] != self.goal or out[-1][0] != 0:
            if self.reit is None:
                raise _NoProof()
            out.append((0, self.goal, self.reit, (str(env[goal]),)))
        if len(out) > 400:
            raise _NoProof()
        width = len(str(len(out)))
        text = []
        for n, (depth, f, just, cites) in enumerate(out, start=1):
            bars = "| " * depth
            j = just if not cites else f"{just} {', '.join(cites)}"
            text.append(f"{str(n).rjust(width)}. {bars}{F.show(f, self.notation)}    {j}")
        return "\n".join(text) + "\n"

    def _mark(self, ctx: _Ctx, i: int, needed: dict) -> None:
        if ctx.alias is not None:
            self._mark(ctx.alias, i, needed)
            return
        acc = needed.setdefault(ctx.id, set())
        if i in acc:
            return
        reason = ctx.reason.get(i, ("inherit",))
        if reason[0] == "inherit":
            self._mark(ctx.parent, i, needed)
            return
        acc.add(i)
        if reason[0] == "rule":
            self._mark_rule(ctx, reason, needed)

    def _mark_rule(self, ctx: _Ctx, reason, needed: dict) -> None:
        inst = self.instances[reason[1]]
        for p in inst.lines:
            self._mark(ctx, p, needed)
        if inst.dup >= 0:
            self._mark_second(ctx, inst.dup, needed)
        for child, c in reason[2]:
            if child.alias is not None:
                self._mark(child.alias, c, needed)
                continue
            needed.setdefault(child.id, set())
            if c == child.assume:
                if inst.nontrivial:
                    if self.reit is None:
                        raise _NoProof()
                continue
            self._mark(child, c, needed)

    def _mark_second(self, ctx: _Ctx, i: int, needed: dict) -> None:
        """Mark what a second line holding formula i needs (the rule that can rederive it)."""
        c, rr = self._rreason(ctx, i)
        self._mark(c, i, needed)
        self._mark_rule(c, rr, needed)

    @staticmethod
    def _rreason(ctx: _Ctx, i: int):
        c = ctx
        while c is not None:
            rr = c.rreason.get(i)
            if rr is not None and rr[0] != "inherit":
                return c, rr
            c = c.parent
        raise _NoProof()

    def _emit(self, ctx: _Ctx, depth: int, env: dict, needed: dict, out: list) -> None:
        for i in sorted(needed.get(ctx.id, ()), key=lambda j: ctx.stamp.get(j, 0)):
            reason = ctx.reason.get(i, ("inherit",))
            if reason[0] != "rule":
                continue
            env[i] = self._emit_rule(ctx, reason, i, depth, env, needed, out)

    def _emit_rule(self, ctx: _Ctx, reason, i: int, depth: int, env: dict, needed: dict, out: list) -> int:
        inst = self.instances[reason[1]]
        cites = [str(self._line(ctx, p, env)) for p in inst.lines]
        if inst.dup >= 0:
            second = self._second(ctx, inst.dup, depth, env, needed, out)
            k = [n for n, p in enumerate(inst.lines) if p == inst.dup][1]
            cites[k] = str(second)
        for child, c in reason[2]:
            start, end = self._emit_sub(ctx, child, c, inst, depth + 1, env, needed, out)
            cites.append(f"{start}-{end}")
        out.append((depth, self.formulas[i], inst.rule, tuple(cites)))
        return len(out)

    def _line(self, ctx: _Ctx, i: int, env: dict) -> int:
        if i not in env:
            raise _NoProof()
        return env[i]

    def _second(self, ctx: _Ctx, i: int, depth: int, env: dict, needed: dict, out: list) -> int:
        """A second line holding formula i (by the rule that can rederive it)."""
        c, rr = self._rreason(ctx, i)
        saved = env.get(i)
        line = self._emit_rule(c, rr, i, depth, env, needed, out)
        if saved is not None:
            env[i] = saved
        return line

    def _emit_sub(self, ctx: _Ctx, child: _Ctx, c: int, inst: Instance, depth: int, env: dict,
                  needed: dict, out: list) -> tuple[int, int]:
        a = child.assume
        out.append((depth, self.formulas[a], "assume", ()))
        start = len(out)
        inner = dict(env)
        inner[a] = start
        if child.alias is None:
            self._emit(child, depth, inner, needed, out)
        last = out[-1]
        if len(out) == start or last[1] != self.formulas[c] or last[0] != depth:
            if c != a or inst.nontrivial or len(out) != start:
                if self.reit is None:
                    raise _NoProof()
                out.append((depth, self.formulas[c], self.reit, (str(self._line(child, c, inner)),)))
        return start, len(out)


class _NoProof(Exception):
    pass


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def search(rules: dict[str, Schema], premises, goal, bounds: Bounds, extra=(),
           notation: F.Notation = F.DEFAULT) -> Outcome:
    """Run the bounded search for premises |- goal."""
    return Search(rules, premises, goal, bounds, extra, notation).run()
