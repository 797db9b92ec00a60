"""The proof kind's LLM-free explorer: learns a rule system from the manual and the checker's verdicts.

It reads only what a model reads (`ProofView`: the manual's rule lines, its notation and proof words, the
decline form, the budget, each task's prompt) and the verdicts of its own probes; the session holds no
handle on the world. For every documented rule it keeps a hypothesis space (compiler/proof/hypotheses.py)
and a set of *candidate tests*: one-rule proofs (compiler/proof/generate.py `rule_proof`) of small
instances of each hypothesis, plain and with the side-condition variants (a line cited twice, a subproof
discharged twice, citations reversed). Each hypothesis predicts each test's verdict: `pass`, or the failing
line and the kind of failure the checker names (wrong number of citations, a guard, the cited lines not
of the rule's form, the rule not giving the line's formula), computed by the same checker with that
hypothesis in the rule's place.

A probe packs several tests, at most one per rule, one after another in one proof (premises first). The
checker names only the first failing line, so a test observed tells its rule `pass` or its failure, and the
tests after it tell nothing. Each rule's test is the one of most expected bits (the entropy of the predicted
verdicts under the current weights); the tests are ordered by bits / (1 - P(pass)), which maximises the
expected bits of the pack (a test is reached only when every earlier one passed). A test once observed is
never packed again, and a probe text is never sent twice. Every observation prunes the rule's hypotheses
to those predicting it; a rule no hypothesis explains is recorded and left out of the learned system. A
proof the session did not write (a model's, when information per probe is scored: information.py) is read
line by line, each line a one-line test of its rule (`observe_proof`).

At a milestone the report states, for every rule whose most probable hypothesis is not the manual's, that
schema (`ID: SCHEMA` in the manual's notation, as `report_instructions` asks); a task is answered by the
bounded search (compiler/proof/search.py) under the learned rule system (each rule's most probable
hypothesis, when it holds at least half its rule's remaining weight): the proof it finds, or the decline
form when the search finds none within its bounds.
"""
from __future__ import annotations

import math
import random
import re

import attrs

from worldspec.compiler.proof import checker, formula as F, generate, proofs, search
from worldspec.compiler.proof.hypotheses import Hypothesis, prior, space
from worldspec.compiler.proof.schema import Schema, build, match, parse_schema, resolve

PASS = "pass"
MAX_PACK_LINES = 280
SEARCH_BOUNDS = search.Bounds(size=6, depth=3, lines=60, nodes=300_000, constants=1)
IMAGE_BOUNDS = attrs.evolve(SEARCH_BOUNDS, nodes=80_000)  # the second search, over the larger universe
CONFIRM_BITS, CONFIRM_PASS = 0.5, 0.8  # a confirmation test's nominal value and pass chance
KEEP_SHARE = 0.5  # a rule's most probable hypothesis joins the learned system at this share of its weight

_RULE_LINE = re.compile(r"^- `(?P<id>[^`\s]+)` (?P<title>.*?): `(?P<schema>[^`]+)`", re.M)
_VERDICT = re.compile(r"rejected at line (?P<line>\d+)(?: \((?P<rule>[^)]+)\))?: (?P<msg>.*)", re.S)
_ARITY = re.compile(r"cites (\d+) lines? and (\d+) subproofs?; this line")


@attrs.frozen
class ProofView:
    """What the explorer may read: the manual's rules, notation and words, the decline form, the budget and
    each task's sequent as its prompt states it."""

    name: str
    notation: F.Notation
    rules: tuple  # (rule id, title, Schema) in the manual's order
    premise_word: str
    assume_word: str
    decline: str
    calls: int
    tasks: tuple  # (task id, premises, goal), goal None when the prompt cannot be read


def failure_kind(message: str) -> str:
    """The kind of failure a checker message names (the explorer's unit of prediction)."""
    m = _ARITY.search(message)
    if m:
        return f"arity {m.group(1)} {m.group(2)}"
    for kind, words in (("distinct", "twice, but"), ("once", "already used at line"),
                        ("nontrivial", "is only its assumption"), ("fresh", "needs a new constant"),
                        ("form", "have the form"), ("give", "does not give"), ("missing", "there is no rule")):
        if words in message:
            return kind
    return "other"


def _split_formulas(text: str) -> list[str]:
    """Comma-separated formulas, commas inside brackets kept."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip() for p in out if p.strip()]


def read_sequent(prompt: str, notation: F.Notation):
    """(premises, goal) from a task prompt's `Premises:` and `Goal:` lines; (None, None) when unreadable."""
    prem = re.search(r"^Premises:\s*(.*)$", prompt, re.M)
    goal = re.search(r"^Goal:\s*(.*)$", prompt, re.M)
    if not goal:
        return None, None
    try:
        text = prem.group(1).strip() if prem else ""
        premises = () if text.lower() in ("", "none", "(none)") else \
            tuple(F.parse(p, notation) for p in _split_formulas(text))
        return premises, F.parse(goal.group(1).strip(), notation)
    except F.FormulaError:
        return None, None


def proof_view(world) -> ProofView:
    """The view of a proof world: read from its manual text, notation, words, budget and task prompts."""
    n = world.notation
    rules = []
    for m in _RULE_LINE.finditer(world.manual):
        try:
            rules.append((m.group("id"), m.group("title"), parse_schema(m.group("schema"), n)))
        except F.FormulaError:
            continue  # a line the manual writes that is no schema: nothing to explore
    tasks = tuple((t.id,) + read_sequent(t.prompt, n) for t in world.tasks)
    return ProofView(world.name, n, tuple(rules), world.premise_word, world.assume_word, world.decline,
                     world.budget.max_calls, tasks)


@attrs.frozen
class Test:
    """One candidate test: a one-rule proof of `rule`, each hypothesis's predicted verdict."""

    rule: str
    text: str
    lines: tuple  # (depth, formula text, justification word, cites) per line
    helpers: frozenset  # other rules its lines cite
    predictions: dict = attrs.field(eq=False)  # hypothesis id -> PASS or (line, failure kind)


def _component(text: str) -> tuple:
    out = []
    for raw in text.splitlines():
        m = re.match(r"\s*\d+\. ((?:\| )*)(.*)$", raw)
        formula, _, just = m.group(2).rpartition("    ")
        word, _, cites = just.partition(" ")
        parsed = []
        for piece in cites.split(","):
            piece = piece.strip()
            if piece:
                a, _, b = piece.partition("-")
                parsed.append((int(a), int(b)) if b else (int(a),))
        out.append((m.group(1).count("|"), formula.strip(), word, tuple(parsed)))
    return tuple(out)


def pack(tests: list[Test], premise_word: str) -> tuple[str, list]:
    """One proof running every test in order (all premises first), and for each global line number its
    (test index, local line number)."""
    prem_rows, body_rows, where = [], [], {}
    n_prem = sum(sum(1 for ln in t.lines if ln[2] == premise_word) for t in tests)
    p_next, b_next = 1, n_prem + 1
    local_maps = []
    for j, t in enumerate(tests):
        mapping = {}
        for k, ln in enumerate(t.lines, start=1):
            if ln[2] == premise_word:
                mapping[k] = p_next
                p_next += 1
            else:
                mapping[k] = b_next
                b_next += 1
            where[mapping[k]] = (j, k)
        local_maps.append(mapping)
        for k, (depth, formula, word, cites) in enumerate(t.lines, start=1):
            cited = ", ".join("-".join(str(mapping[c]) for c in cite) for cite in cites)
            row = (mapping[k], depth, formula, word + (" " + cited if cited else ""))
            (prem_rows if word == premise_word else body_rows).append(row)
    rows = sorted(prem_rows + body_rows)
    width = len(str(len(rows)))
    text = "".join(f"{str(g).rjust(width)}. {'| ' * d}{f}    {j}\n" for g, d, f, j in rows)
    return text, [where[g] for g in range(1, len(rows) + 1)]


def images(table: dict[str, Schema], premises, goal, bounds: search.Bounds) -> list:
    """Formulas outside the sequent's search universe that a one-line rule of `table` concludes from a
    formula inside it (closed, within the size bound)."""
    forms, _ = search.universe(premises, goal, bounds)
    known, out = set(forms), {}
    for s in table.values():
        if len(s.lines) != 1 or s.subs:
            continue
        for f in forms:
            sigma: dict = {}
            if match(s.lines[0], f, sigma) and resolve(sigma):
                g = build(s.conclusion, sigma)
                if g is not None and g not in known and F.is_closed(g) and F.size(g) <= bounds.size:
                    out[g] = None
    return list(out)


def _failing_line(feedback: str, n_lines: int):
    """(the line a verdict names as failing, its match) or (n_lines + 1, None) when every line checked;
    (None, None) when the verdict blames no line (the proof could not be read)."""
    m = _VERDICT.search(feedback)
    if m:
        return int(m.group("line")), m
    if feedback.startswith("accepted") or feedback.startswith("not a finished proof"):
        return n_lines + 1, None
    return None, None


def _entropy(dist: dict) -> float:
    total = sum(dist.values())
    return -sum(v / total * math.log2(v / total) for v in dist.values() if v > 0) if total > 0 else 0.0


class ProofExplorer:
    """An explorer session (compiler.api's explorer members: next_probe, observe, report, answer,
    snapshot, restore) over a ProofView."""

    def __init__(self, view: ProofView, seed: int = 0, widen: bool = False):
        self.view = view
        self.seed = seed
        # a second search over a wider universe for goals the first misses: AlienLogic 63/70 instead of
        # 61/70 at about four times the answering time (docs/explorer.md, "Proof worlds"), so not the default
        self.widen = widen
        self.base = {rid: schema for rid, _, schema in view.rules}
        self.order = [rid for rid, _, _ in view.rules]
        self.space: dict[str, list[Hypothesis]] = {rid: space(s) for rid, s in self.base.items()}
        self.weights: dict[str, dict[str, float]] = {rid: prior(h) for rid, h in self.space.items()}
        self.reit = self._helper("A |- A")
        self.inst = self._helper("forall x A |- A[t/x]")
        self.tests: dict[str, list[Test]] = {rid: self._tests(rid) for rid in self.order}
        self.fresh_rules = {rid for rid, hs in self.space.items() if any(h.schema.fresh for h in hs)}
        self.asked: set[str] = set()  # tests observed (never packed again)
        self.sent: set[str] = set()  # probe texts sent
        self.unexplained: dict[str, str] = {}  # rule -> the verdict no hypothesis predicted
        self.passed: set[str] = set()  # rules a test has been seen to pass
        self.layouts: dict[str, list] = {}  # probe text -> [(test, local line)] per global line
        self.answers: dict = {}

    # ------------------------------------------------------------ building

    def _helper(self, text: str) -> str | None:
        want = parse_schema(text).canonical()
        return next((rid for rid, s in self.base.items() if s.canonical() == want), None)

    def _sigmas(self, schema: Schema, rng: random.Random) -> list[dict]:
        every = list(generate.assignments(schema, limit=400))
        if not every:
            return [{}]
        distinct = max(every, key=lambda s: len({repr(v) for v in s.values()}))
        picks = [distinct, every[0]] + rng.sample(every, min(3, len(every)))
        out, seen = [], set()
        for s in picks:
            key = repr(sorted(s.items()))
            if key not in seen:
                seen.add(key)
                out.append(s)
        return out

    def _tests(self, rid: str) -> list[Test]:
        """Candidate tests of one rule, with every hypothesis's predicted verdict."""
        rng = random.Random(f"proof-explorer:{self.seed}:{rid}")
        v = self.view
        texts: dict[str, None] = {}
        for h in self.space[rid]:
            for sigma in self._sigmas(h.schema, rng):
                for variant in generate.VARIANTS:
                    reit = self.reit if self.reit != rid else None
                    inst = self.inst if self.inst != rid else None
                    text = generate.rule_proof(rid, h.schema, sigma, variant, reit, v.notation,
                                               v.premise_word, v.assume_word, inst)
                    if text and len(text.splitlines()) < 40:
                        texts.setdefault(text, None)
        out = []
        helpers_base = {r: self.base[r] for r in (self.reit, self.inst) if r and r != rid}
        words = ((v.premise_word,) + proofs.PREMISE_WORDS, (v.assume_word,) + proofs.ASSUME_WORDS)
        for text in texts:
            proof = proofs.read(text, v.notation, *words)
            preds = {}
            for h in self.space[rid]:
                res = checker.check(proof, {**helpers_base, rid: h.schema}, v.notation)
                preds[h.id] = PASS if res.ok else (res.line, failure_kind(res.message))
            if len(set(preds.values())) < 2:
                continue  # every hypothesis predicts the same verdict: the test tells nothing
            lines = _component(text)
            helpers = frozenset(ln[2] for ln in lines if ln[2] not in (v.premise_word, v.assume_word)) - {rid}
            out.append(Test(rid, text, lines, helpers, preds))
        return out

    # ------------------------------------------------------------ probing

    def _dist(self, test: Test) -> dict:
        dist: dict = {}
        for hid, w in self.weights[test.rule].items():
            if w > 0:
                o = test.predictions[hid]
                dist[o] = dist.get(o, 0.0) + w
        return dist

    def confirmed(self, rid: str | None) -> bool:
        """Whether a helper rule is believed as documented (its manual line holds 95% of its weight)."""
        w = self.weights.get(rid, {})
        total = sum(w.values())
        return bool(total) and w.get("base", 0.0) / total >= 0.95

    def plan(self) -> list[tuple[Test, float, float]]:
        """The next pack: (test, expected bits, P(pass)) in the order they are written."""
        picks = []
        for rid in self.order:
            if rid in self.unexplained or not self.weights[rid]:
                continue
            best = None
            for t in self.tests[rid]:
                if t.text in self.asked:
                    continue
                if any(h in self.unexplained or not self.weights.get(h) for h in t.helpers):
                    continue
                dist = self._dist(t)
                bits = _entropy(dist)
                if bits < 1e-6:
                    continue
                key = (bits, -len(t.lines))
                if best is None or key > best[0]:
                    best = (key, t, bits, dist.get(PASS, 0.0) / sum(dist.values()))
            if best is None and rid not in self.passed:
                best = self._confirmation(rid)
            if best:
                picks.append(best[1:])
        # tests relying on a helper not yet confirmed come after the helper's own test
        helpers = {h for t, _, _ in picks for h in t.helpers if not self.confirmed(h)}
        first = [p for p in picks if p[0].rule in helpers]
        rest = [p for p in picks if p[0].rule not in helpers
                and all(h in {q[0].rule for q in first} or self.confirmed(h) for h in p[0].helpers)]
        rest.sort(key=lambda p: -p[1] / max(1e-9, 1 - p[2]))
        out, lines, fresh = [], 0, False
        for p in first + rest:
            if p[0].rule in self.fresh_rules:
                if fresh:
                    continue  # eigenvariables of two tests could meet in one proof's premises
                fresh = True
            if lines + len(p[0].lines) > MAX_PACK_LINES:
                continue
            out.append(p)
            lines += len(p[0].lines)
        return out

    def _confirmation(self, rid: str):
        """A test the most probable hypothesis passes, for a rule nothing has yet been seen to pass: the
        space may lack the true rule, and pruning alone never shows that (nominal CONFIRM_BITS)."""
        h, _ = self.belief(rid)
        if h is None:
            return None
        for t in self.tests[rid]:
            if t.text not in self.asked and t.predictions[h.id] == PASS and \
                    not any(x in self.unexplained or not self.weights.get(x) for x in t.helpers):
                return ((CONFIRM_BITS, -len(t.lines)), t, CONFIRM_BITS, CONFIRM_PASS)
        return None

    def expected(self, planned) -> float:
        """The bits a pack of these (test, bits, P(pass)) is expected to remove: each test's entropy under
        the weights (a confirmation test's nominal value is not counted), reached when every earlier test
        passed."""
        total, reach = 0.0, 1.0
        for t, _, _ in planned:
            dist = self._dist(t)
            mass = sum(dist.values())
            if not mass:
                break
            total += reach * _entropy(dist)
            reach *= dist.get(PASS, 0.0) / mass
        return total

    def register(self, tests: list[Test]) -> str:
        """The proof packing these tests, remembered so that its verdict is read test by test."""
        text, layout = pack(tests, self.view.premise_word)
        self.layouts[text] = [(tests[j], k) for j, k in layout]
        return text

    def next_probe(self) -> str:
        """The next proof to check (never one already sent)."""
        tests = [t for t, _, _ in self.plan()]
        while tests:
            text, _ = pack(tests, self.view.premise_word)
            if text not in self.sent:
                self.sent.add(text)
                return self.register(tests)
            tests = tests[:-1]
        # nothing left to learn: a proof of the reiteration the explorer has not sent (costs a unit, tells nothing)
        k = len(self.sent) + 1
        text = "".join(f"{i}. P    {self.view.premise_word}\n" for i in range(1, k + 1))
        self.sent.add(text)
        return text

    def observe(self, program: str, feedback: str) -> float:
        """Prune every tested rule's hypotheses to those predicting the verdict; the bits removed. Its own
        probes are read test by test, any other proof line by line (observe_proof)."""
        layout = self.layouts.get(program)
        if layout is None:
            return self.observe_proof(program, feedback)
        fail_at, m = _failing_line(feedback or "", len(layout))
        if fail_at is None:
            return 0.0  # the proof could not be read at all: no rule is to blame
        bits = 0.0
        done = set()
        last: dict = {}
        for g, (test, _) in enumerate(layout, start=1):
            last[id(test)] = (g, test)
        for g, test in sorted(last.values(), key=lambda x: x[0]):
            if g < fail_at:  # every line of the test checked (its premises come first)
                done.add(test.text)
                bits += self._update(test, PASS)
        if fail_at <= len(layout):
            test, k = layout[fail_at - 1]
            blamed = m.group("rule") or ""
            if blamed and blamed != test.rule and blamed in self.weights:
                bits += self._prune_base(blamed, feedback)
            else:
                bits += self._update(test, (k, failure_kind(m.group("msg"))))
                done.add(test.text)
        self.asked |= done
        return bits

    def observe_proof(self, text: str, feedback: str) -> float:
        """Prune on the verdict of any proof (a model's): every rule line before the failing one passed
        under its true rule, and the failing line failed as the checker says. Each line is judged under
        each hypothesis of its rule with the lines before it taken as checked (checker.check's `only`), and
        pruned as a one-line test; the bits removed."""
        if not isinstance(text, str):
            return 0.0
        v = self.view
        proof = proofs.read(text, v.notation, (v.premise_word,) + proofs.PREMISE_WORDS,
                            (v.assume_word,) + proofs.ASSUME_WORDS)
        if proof.error or not proof.lines:
            return 0.0
        fail_at, m = _failing_line(feedback or "", len(proof.lines))
        if fail_at is None:
            return 0.0
        bits = 0.0
        for ln in proof.lines[:fail_at]:
            rid = checker.rule_named(self.base, ln.rule) if ln.kind == "rule" and not ln.error else None
            if rid is None or len(self.weights.get(rid, {})) < 2:
                continue  # no documented rule, or nothing left to tell apart
            preds = {}
            for h in self.space[rid]:
                if h.id in self.weights[rid]:
                    res = checker.check(proof, {**self.base, rid: h.schema}, v.notation, only=ln.n)
                    preds[h.id] = PASS if res.line != ln.n else (ln.n, failure_kind(res.message))
            if len(set(preds.values())) < 2:
                continue  # every hypothesis left judges the line alike: it tells nothing
            seen = PASS if ln.n < fail_at else (ln.n, failure_kind(m.group("msg")))
            bits += self._update(Test(rid, text, (), frozenset(), preds), seen)
        return bits

    def _update(self, test: Test, outcome) -> float:
        """Keep the rule's hypotheses that predicted the outcome; the bits removed (0 when none did)."""
        w = self.weights[test.rule]
        kept = {h: v for h, v in w.items() if v > 0 and test.predictions.get(h) == outcome}
        if kept:
            self.weights[test.rule] = kept
            if outcome == PASS:
                self.passed.add(test.rule)
            return math.log2(sum(w.values()) / sum(kept.values()))
        self.weights[test.rule] = {}
        self.unexplained[test.rule] = f"{outcome} on a test no hypothesis predicts"
        return 0.0

    def _prune_base(self, rid: str, feedback: str) -> float:
        """A helper's own line failed inside another rule's test: its manual line is wrong."""
        before = sum(self.weights[rid].values())
        w = {h: v for h, v in self.weights[rid].items() if h != "base"}
        self.weights[rid] = w
        if not w:
            self.unexplained[rid] = f"its line failed in another rule's test ({feedback[:80]})"
            return 0.0
        return math.log2(before / sum(w.values()))

    # ------------------------------------------------------------ beliefs

    def belief(self, rid: str) -> tuple[Hypothesis | None, float]:
        """A rule's most probable hypothesis (the manual's line first on ties) and its share of the weight."""
        w = self.weights.get(rid, {})
        total = sum(w.values())
        if not total:
            return None, 0.0
        by_id = {h.id: h for h in self.space[rid]}
        hid = max(w, key=lambda h: (w[h], h == "base"))
        return by_id[hid], w[hid] / total

    def system(self) -> dict[str, Schema]:
        """The learned rule system: each rule's most probable hypothesis, when it is at least KEEP_SHARE."""
        out = {}
        for rid in self.order:
            h, share = self.belief(rid)
            if h is not None and share >= KEEP_SHARE:
                out[rid] = h.schema
        return out

    def report(self) -> str:
        """`ID: SCHEMA` for every rule believed to differ from the manual (UNKNOWN when none does)."""
        out = []
        for rid in self.order:
            h, _ = self.belief(rid)
            if h is not None and not h.is_base:
                out.append(f"{rid}: {h.show(self.view.notation)}")
        return "\n".join(out) or "UNKNOWN"

    def answer(self, task) -> str:
        """A proof the learned system finds within the search bounds, or the decline form."""
        tid = task if isinstance(task, str) else task.id
        row = next((r for r in self.view.tasks if r[0] == tid), None)
        if row is None or row[2] is None:
            return self.view.decline
        table = self.system()
        key = (tid, self.widen, tuple(sorted((r, s.canonical()) for r, s in table.items())))
        if key not in self.answers:
            self.answers[key] = self._prove(table, row[1], row[2])
        return self.answers[key]

    def _prove(self, table, premises, goal) -> str:
        """The search over the sequent's universe; failing that, when `widen` is set, over it with the
        one-step images of its formulas under the learned one-line rules (a proof may pass through B & A to
        reach A from A & B; tried second because the larger universe spends the node bound sooner)."""
        v = self.view
        passes = (((), SEARCH_BOUNDS), (None, IMAGE_BOUNDS)) if self.widen else (((), SEARCH_BOUNDS),)
        for extra, bounds in passes:
            if extra is None:
                extra = images(table, premises, goal, bounds)
                if not extra:
                    break
            outcome = search.search(table, premises, goal, bounds, extra=extra, notation=v.notation)
            if outcome.found and outcome.proof:
                proof = proofs.read(outcome.proof, v.notation, (v.premise_word,) + proofs.PREMISE_WORDS,
                                    (v.assume_word,) + proofs.ASSUME_WORDS)
                res = checker.check(proof, table, v.notation)
                if res.accepted and res.conclusion == goal and all(p in premises for p in res.premises):
                    return outcome.proof
        return v.decline

    # ------------------------------------------------------------ sessions

    def snapshot(self):
        """The state a later restore returns to (the weights and what was asked)."""
        return ({r: dict(w) for r, w in self.weights.items()}, set(self.asked), set(self.sent),
                dict(self.unexplained), set(self.passed))

    def restore(self, state) -> None:
        weights, asked, sent, unexplained, passed = state
        self.weights = {r: dict(w) for r, w in weights.items()}
        self.asked, self.sent, self.unexplained = set(asked), set(sent), dict(unexplained)
        self.passed = set(passed)

