"""Certification of a black box: is it a sound benchmark item?

* every test input is admitted (domains and predicate, a test's queries in order)
  and f computes its answer;
* the predicate admits inputs: seeded draws from the domains (and the sample
  inputs) find enough distinct admitted inputs, and f is defined on them;
* tests are not all answered alike;
* every perturbed rule (a box with a flawed description) is observable on some
  admitted input (a box with memory: on some sequence of queries from a fresh
  session, searched within bounds and reported) and changes the answer of some
  test; each of its `witness` lines tells it apart; herrings are unchanged;
* simple hypotheses fail: each declared `hypothesis`, and on hard boxes each of
  the family's stock hypotheses (identity, sorting, Caesar shifts, constant
  outputs...), gets at least one test wrong;
* a box with memory or noise: the memory (the noise) changes some output in a
  session, and f hits no limit along it;
* a box answered with a program: the reference program answers every test;
* interactive puzzles (goal boxes): every target is admitted, a consistent-guess
  solver pins each one down within the box's turns, and on hard boxes the
  candidates cannot simply be tried in order. A target domain too large to
  enumerate is checked by sampling, and the report states the confidence.

The report has the keys of compiler/program/certify.py's report plus family,
difficulty, admitted, hypotheses, session, notes and warnings. `cross_checks`
compares the boxes of a folder (compiler/suite.py): no easy box answers a hard
box of its family.
"""
from __future__ import annotations

import math
import random

from worldspec.compiler.blackbox.domains import MAX_ENUM, render
from worldspec.compiler.blackbox.grading import compile_program, more_steps, program_results
from worldspec.compiler.items import hard_easy_pairs
from worldspec.values import EvalError, LimitError, same

ADMIT_DRAWS = 400
ADMIT_WANT = 60
MIN_ADMITTED = 8
SOLVER_EVALS = 8000
SAMPLED_CANDIDATES = 2000  # candidates drawn when a target's domain is too large to enumerate
CONFIDENCE = 0.95
SESSION_QUERIES = 30  # queries of the session that checks a box's memory and noise
NOISE_STREAMS = 6
# A box with memory: the bounds of the search for a sequence that tells a rule apart (witness_sequence)
SEQ_LENGTH = 8  # queries in a repeated or drawn sequence
SEQ_REPEATS = 20  # pool inputs each tried repeated SEQ_LENGTH times
SEQ_DRAWS = 200  # seeded sequences drawn from the pool


def outcome(w, values, **how) -> tuple:
    """("ok", f(values)) or ("error", message): f's result as a comparable pair.

    `how` is passed to `w.evaluate`: another compiled f (unit=...) or another target (target=...)."""
    try:
        return ("ok", w.evaluate(values, **how))
    except EvalError as e:
        return ("error", e.message)


def sent(session, values) -> tuple:
    """("ok", output) or ("error", message) of one query in a session (which moves on)."""
    try:
        return ("ok", session.send(values))
    except EvalError as e:
        return ("error", e.message)


def _differs(a, b) -> bool:
    if a[0] != b[0]:
        return True
    return a[0] == "ok" and not same(a[1], b[1])


class Elimination:
    """A consistent-guess solver's view of a goal box: the candidates still consistent with what it saw."""

    def __init__(self, w, candidates: list, target, replies: dict | None = None):
        self.w = w
        self.cands = list(candidates)
        # a box with memory answers a guess after the earlier guesses: keep one session per candidate
        self.sessions = [w.session_for(c) for c in self.cands] if w.stateful else None
        self.truth = w.session_for(target)
        self.guesses: list = []
        # A box without memory answers a guess by a function of (guess, candidate) alone; the solvers
        # of one box's targets share most candidates and guesses, so its replies are kept in `replies`
        # (shared by the caller across targets), keyed by what the values render as.
        self.replies = replies if replies is not None else {}

    def reply(self, i: int, guess) -> tuple:
        if self.sessions is None:
            return self.stateless_reply(self.cands[i], guess)
        return sent(self.sessions[i].fork(), [guess])

    def stateless_reply(self, candidate, guess) -> tuple:
        """What a box without memory answers `guess` when `candidate` is the target (memoised)."""
        key = (render(guess), render(candidate))
        got = self.replies.get(key)
        if got is None:
            got = self.replies[key] = outcome(self.w, [guess], target=candidate)
        return got

    def guess(self, g) -> tuple:
        """Make a guess: keep the candidates that would have answered it as the target did."""
        fb = sent(self.truth, [g])
        keep = [i for i in range(len(self.cands)) if not _differs(self.reply(i, g), fb)]
        if self.sessions is not None:
            for i in keep:
                sent(self.sessions[i], [g])
            self.sessions = [self.sessions[i] for i in keep]
        self.cands = [self.cands[i] for i in keep]
        self.guesses.append((g, fb))
        return fb

    def consistent(self, candidate) -> bool:
        """Whether a candidate outside the solver's list would have answered every guess as the target did."""
        if self.sessions is None:
            return all(not _differs(self.stateless_reply(candidate, g), fb) for g, fb in self.guesses)
        s = self.w.session_for(candidate)
        return all(not _differs(sent(s, [g]), fb) for g, fb in self.guesses)


def solve_by_elimination(w, candidates: list, turns: int, target=None, queries: list | None = None,
                         budget: int = SOLVER_EVALS, replies: dict | None = None):
    """(turns a consistent-guess solver needs to pin the target down or None, its Elimination).

    Each turn guesses, among the middle candidate and a few seeded others (or, when the box's queries
    are not candidates, among its sample queries), the one whose worst feedback leaves the fewest
    candidates (as many as `budget` evaluations allow); then it keeps the candidates that would have
    given the feedback actually seen."""
    target = w.goal if target is None else target
    e = Elimination(w, candidates, target, replies)
    rng = random.Random(f"solver:{w.name}")
    for k in range(1, turns + 1):
        if not e.cands:
            return None, e
        n = len(e.cands)
        extra = max(0, min(24, budget // n) - 1)
        if queries is None:
            pool = [e.cands[n // 2]] + (rng.sample(e.cands, min(extra, n)) if extra else [])
        else:
            pool = rng.sample(queries, min(len(queries), extra + 1))
        g, best = pool[0], None
        if len(pool) > 1:
            for cand in pool:
                classes: dict = {}
                for i in range(n):
                    key = repr(e.reply(i, cand))
                    classes[key] = classes.get(key, 0) + 1
                worst = max(classes.values())
                if best is None or worst < best:
                    g, best = cand, worst
        e.guess(g)
        if len(e.cands) == 1 and same(e.cands[0], target):
            return k, e
    return None, e


def certify_box(w, progress=None) -> dict:
    """The certification report of a BlackBoxWorld `w` (problems empty exactly when it is certified)."""
    say = progress or (lambda msg: None)
    problems: list[str] = []
    notes: list[str] = []
    warnings: list[str] = []
    say(f"checking {w.name}")
    check_tests(w, problems)
    admitted = admitted_inputs(w, problems)
    plain = [c for c in w.tests if c.plain]
    requires = {t.id: sorted(w.requires(t)) for t in w.tasks} if w.rules else {}
    rule_table = check_rules(w, [list(c.values) for c in plain] + list(admitted.values()), requires, problems)
    herring_table = [{"id": h.id, "target": h.target, "unchanged": True} for h in w.herrings]
    hyp_table = check_hypotheses(w, problems, notes)
    session_table = check_sessions(w, list(admitted.values()), problems, notes)
    solver_turns = check_puzzles(w, problems, notes, warnings) if w.has_goal else None
    if w.program_answer:
        check_solution(w, problems, notes)
    notes.insert(0, f"family {w.family}, difficulty {w.difficulty}; {len(w.tests)} test(s); "
                    f"{len(admitted)} distinct admitted inputs in {ADMIT_DRAWS} draws")
    notes += [f"warning: {x}" for x in warnings]
    labels = {"family": {w.family: len(w.tasks)}, "difficulty": {w.difficulty: len(w.tasks)}}
    return {
        "world": w.name, "kind": w.kind, "language": w.language, "seed": w.seed, "default_seed": w.default_seed,
        "params": {k: v for k, v in w.params}, "rules": len(w.rules), "herrings": len(w.herrings),
        "tasks": len(w.tasks), "examples": len(w.examples) + len(w.worked), "family": w.family, "difficulty": w.difficulty,
        "tests": [{"id": c.id, "input": w.format(c.values) if c.values else None,
                   "given": [w.format(v) for v in c.given],
                   "answer": w.format_answer(c.expected) if w.has_goal else render(c.expected)} for c in w.tests],
        "admitted": len(admitted), "solver_turns": solver_turns, "session": session_table,
        "rule_table": rule_table, "herring_table": herring_table, "requires": requires,
        "hypotheses": hyp_table, "labels": labels, "notes": notes, "warnings": warnings, "problems": problems,
    }


def check_tests(w, problems: list[str]) -> None:
    """Test inputs and targets are admitted; tests differ in input and not all share one answer."""
    for c in w.tests:
        if not c.values:
            continue
        s = w.session(stream=f"test:{c.id}")
        for values in c.given + (c.values,):
            why = w.admits(list(values), s.state)
            if why:
                problems.append(f"test {c.id} (line {c.line}): its input {w.format(values)} is not admitted: {why}")
                break
            sent(s, values)
    for k, target in enumerate(w.targets):
        d = w.answer_domain
        why = d.check(target) if d is not None else w.admits([target])
        if why:
            what = "an admitted input" if d is None else "an answer"
            problems.append(f"the target {w.format_answer(target)} is not {what}: {why}")
    asked = [c for c in w.tests if c.values]
    if len({(tuple(w.format(v) for v in c.given), w.format(c.values)) for c in asked}) != len(asked):
        problems.append("two tests send the same queries")
    if len(asked) > 1 and all(same(c.expected, asked[0].expected) for c in asked):
        problems.append("every test has the same answer: a constant guess would pass")


def admitted_inputs(w, problems: list[str]) -> dict:
    """Distinct admitted inputs drawn from the domains (text -> values); too few, or f failing, is a problem."""
    rng = random.Random(f"certify:{w.name}:{w.seed}")
    samples = w.sample_inputs(rng, ADMIT_WANT, tries=ADMIT_DRAWS)
    distinct = {w.format(s): s for s in samples}
    s = w.session()  # the samples are sent in order, as a session (a box with memory may need the earlier ones)
    for values in w.input_samples:
        why = w.admits(list(values), s.state)
        if why:
            problems.append(f"the sample input {w.format(values)} is not admitted after the samples before it: "
                            f"{why}")
            break
        if w.admits(list(values)) is None:
            distinct.setdefault(w.format(values), list(values))
        sent(s, values)
    want = min(MIN_ADMITTED, _space(w) or MIN_ADMITTED)
    if len(distinct) < want:
        problems.append(f"the predicate admits too little: {len(distinct)} distinct admitted inputs in "
                        f"{ADMIT_DRAWS} draws from the domains")
    for text, values in distinct.items():
        try:
            w.evaluate(values)
        except EvalError as e:
            problems.append(" ".join(filter(None, (f"f fails on the admitted input {text}: {e.message}",
                                                   more_steps(e)))))
            break
    return distinct


def check_rules(w, pool: list, requires: dict, problems: list[str]) -> list[dict]:
    """Each perturbed rule is observable and required by some test; each of its `witness` lines tells it apart.

    A box without memory: observable on some input of `pool`, sent alone. A box with memory: on some sequence
    of queries sent in a fresh session (its rule may show only after earlier queries moved the memory on),
    searched as `witness_sequence` says; the report gives the sequence found."""
    all_rules = frozenset(r.id for r in w.rules)
    declared = dict(w.rule_witnesses)
    table = []
    for r in w.rules:
        applied = all_rules - {r.id}
        own = declared.get(r.id, ())
        told = [(seq, first_difference(w, applied, seq)) for seq in own]  # each witness line, replayed once
        for n, (seq, k) in enumerate(told, start=1):
            if k is None:
                problems.append(f"rule {r.id}: witness {n} ({said(w, seq)}) does not tell it apart from the "
                                "documented behaviour (a witness is a claim: fix or remove it)")
        if w.stateful:
            # the search tries the witness lines first: the first that tells, cut after its first difference
            found = next(([list(v) for v in seq[:k + 1]] for seq, k in told if k is not None), None)
            if found is None:
                found = witness_sequence(w, r.id, applied, pool)
            witness = said(w, found) if found is not None else None
        else:
            knocked = w.variant_hidden(applied)
            found = next(([v] for v in pool if _differs(outcome(w, v), outcome(w, v, unit=knocked))), None)
            if found is None:
                found = next((seq for seq, k in told if k is not None), None)
            witness = (w.format(found[0]) if len(found) == 1 else said(w, found)) if found is not None else None
        used_by = [tid for tid, req in requires.items() if r.id in req]
        if witness is None and w.stateful:
            problems.append(f"rule {r.id} ({r.title}) is not observable: no sequence of queries tried tells it "
                            f"apart from the documented behaviour. The box has memory, so sequences were "
                            f"searched, each sent from the start state of a fresh session: {searched(w, pool, own)}. "
                            "If a sequence shows it, add it to the rule as: witness Q1, Q2, ... (the queries in "
                            "order)")
        elif witness is None:
            problems.append(f"rule {r.id} ({r.title}) is not observable: no admitted input tried tells it "
                            "apart from the documented behaviour")
        if not used_by:
            problems.append(f"rule {r.id} ({r.title}) is required by no test: every answer stays the same "
                            "with it reverted")
        row = {"id": r.id, "title": r.title, "target": r.target, "observable": witness is not None,
               "witness": witness, "tasks": used_by}
        if w.stateful:
            row["witness_sequence"] = [w.format(v) for v in found] if found is not None else None
        table.append(row)
    return table


def said(w, seq) -> str:
    """A sequence of queries as a report writes it: `3`, then `5`."""
    return ", then ".join(f"`{w.format(v)}`" for v in seq)


def first_difference(w, applied: frozenset, seq) -> int | None:
    """The index of the first query of `seq` (sent in a fresh session) that the true box and the box with only
    `applied` rules answer differently, or None. Both sessions run the same noise stream; a query one box
    admits and the other refuses (a predicate may read the memory) is a difference an agent sees."""
    true = w.session_under(frozenset(r.id for r in w.rules))
    other = w.session_under(applied)
    for k, values in enumerate(seq):
        values = list(values)
        a, b = w.admits(values, true.state), w.admits(values, other.state)
        if (a is None) != (b is None):
            return k
        if a is not None:  # both refuse it: the sequence cannot be sent further
            return None
        if _differs(sent(true, values), sent(other, values)):
            return k
    return None


def candidate_sequences(w, rule_id: str, pool: list, own: tuple):
    """The sequences a box with memory is searched over, in order (bounded and seeded): the rule's witness
    lines, each test's queries, every pool input alone, the first pool inputs each repeated SEQ_LENGTH times,
    then SEQ_DRAWS sequences of SEQ_LENGTH queries drawn from the pool."""
    yield from own
    for c in w.tests:
        if c.values:
            yield tuple(c.given) + (c.values,)
    for v in pool:
        yield (v,)
    for v in pool[:SEQ_REPEATS]:
        yield (v,) * SEQ_LENGTH
    rng = random.Random(f"sequences:{w.name}:{w.seed}:{rule_id}")
    for _ in range(SEQ_DRAWS if pool else 0):
        yield tuple(rng.choice(pool) for _ in range(SEQ_LENGTH))


def witness_sequence(w, rule_id: str, applied: frozenset, pool: list, own: tuple = ()) -> list | None:
    """The first searched sequence (cut after its first differing query) that tells the rule apart, or None."""
    for seq in candidate_sequences(w, rule_id, pool, own):
        k = first_difference(w, applied, seq)
        if k is not None:
            return [list(v) for v in seq[:k + 1]]
    return None


def searched(w, pool: list, own: tuple) -> str:
    """What witness_sequence tried, said."""
    parts = [f"its {len(own)} witness line(s)"] if own else []
    asked = sum(1 for c in w.tests if c.values)
    parts += [f"the queries of its {asked} test(s)", f"{len(pool)} admitted inputs each alone and the first "
              f"{min(len(pool), SEQ_REPEATS)} repeated {SEQ_LENGTH} times",
              f"{SEQ_DRAWS if pool else 0} seeded sequences of {SEQ_LENGTH} queries drawn from them"]
    return ", ".join(parts)


def check_hypotheses(w, problems: list[str], notes: list[str]) -> list[dict]:
    """Declared hypotheses (and, on hard boxes, the family's stock ones) get some test wrong."""
    table: list[dict] = []
    asked = [c for c in w.tests if c.values]
    plain = [c for c in asked if c.plain]
    if not asked:
        return table
    declared = [(name, unit, True) for name, unit in w.hypotheses]
    stock = [(name, fn, False) for name, fn in STOCK.get(w.family, {}).items()] if plain else []
    for name, fn, is_declared in declared + stock:
        solved = True
        for c in (asked if is_declared else plain):
            try:
                got = w.answer_of(c, fn) if is_declared else fn(list(c.values))
            except Exception:  # noqa: BLE001 - a stock hypothesis that does not apply fails the test
                solved = False
                break
            if not w.grading.close(got, c.expected):
                solved = False
                break
        table.append({"name": name, "declared": is_declared, "refuted": not solved})
        if solved and (is_declared or w.difficulty == "hard"):
            problems.append(f"the simple hypothesis {name!r} answers every test: the tests do not tell "
                            f"it apart from the box")
    refuted = sum(h["refuted"] for h in table)
    notes.append(f"simple hypotheses refuted by the tests: {refuted} of {len(table)}")
    return table


def session_queries(w, admitted: list) -> list[list]:
    """The queries of one long session: the tests' queries, the sample inputs, then drawn admitted inputs."""
    out = [list(v) for c in w.tests if c.values for v in c.given + (c.values,)]
    out += [list(v) for v in w.input_samples] + [list(v) for v in admitted]
    return out[:SESSION_QUERIES]


def check_sessions(w, admitted: list, problems: list[str], notes: list[str]) -> dict:
    """A box with memory: the memory changes some output and f stays defined along a session. A box with
    noise: the noise changes some output, and the same stream gives the same outputs."""
    if not w.stateful and not w.noise:
        return {}
    queries = session_queries(w, admitted)
    table: dict = {"queries": len(queries)}
    runs = []
    for stream in range(NOISE_STREAMS if w.noise else 1):
        s = w.session(stream=stream)
        outs = []
        for values in queries:
            if w.admits(values, s.state) is not None:
                outs.append(("rejected", None))
                continue
            try:
                outs.append(("ok", s.send(values)))
            except LimitError as e:
                problems.append(f"f hits a limit on {w.format(values)} after {s.queries} queries of a session: "
                                f"{e.message}")
                return table
            except EvalError as e:
                outs.append(("error", e.message))
        runs.append(outs)
    if w.stateful:
        fresh = [outcome(w, v) if w.admits(v) is None else ("rejected", None) for v in queries]
        changed = sum(_differs(a, b) for a, b in zip(runs[0], fresh))
        table["memory_changes"] = changed
        if not w.noise and not changed:
            problems.append(f"the memory changes no output in a session of {len(queries)} queries: every query "
                            "is answered as in a fresh session")
        notes.append(f"memory: {changed} of {len(queries)} queries of a session are answered otherwise than in "
                     "a fresh session")
    if w.noise:
        varied = sum(any(_differs(r[i], runs[0][i]) for r in runs[1:]) for i in range(len(queries)))
        table["noise_changes"] = varied
        if not varied:
            problems.append(f"the noise ({', '.join(w.noise)}) changes no output: {NOISE_STREAMS} streams answer "
                            f"a session of {len(queries)} queries alike")
        notes.append(f"noise: {varied} of {len(queries)} queries are answered differently in another of "
                     f"{NOISE_STREAMS} seeded streams; a stream is fixed by the world's seed")
    return table


def check_solution(w, problems: list[str], notes: list[str]) -> None:
    """A box answered with a program: its reference program compiles and answers every test."""
    try:
        unit = compile_program(w.solution_program, [n for n, _ in w.inputs])
    except Exception as e:  # noqa: BLE001 - InputError from the answer compiler, reported as a problem
        problems.append(f"the reference program does not compile: {e}")
        return
    results = program_results(unit, [list(c.values) for c in w.tests], w.max_steps)
    wrong = [c.id for c, (st, got) in zip(w.tests, results) if st != "ok" or not w.grading.close(got, c.expected)]
    if wrong:
        problems.append(f"the reference program gets test(s) {', '.join(wrong)} wrong")
    else:
        notes.append(f"the reference program answers all {len(w.tests)} test inputs")


def check_puzzles(w, problems: list[str], notes: list[str], warnings: list[str]) -> int | None:
    """A goal box: for every target, a consistent-guess solver pins it down in time (the most turns needed).

    A goal marked `again` repeats an earlier target (solved once); on a goal marked `defect` (a published
    defect kept) the solver's failure is a warning, and its success a problem (the mark is wrong)."""
    distinct = [c for c in w.tests if "again" not in c.marks]
    if len(distinct) != len({w.format_answer(c.expected) for c in distinct}):
        problems.append("two goals hide the same target")
    if w.noise:
        notes.append("the consistent-guess solver is not run: the box's feedback is random (noise), so "
                     "eliminating candidates by their feedback does not apply")
        return None
    d = w.answer_domain if w.answer_domain is not None else w.inputs[0][1]
    size = d.size()
    queries = None
    if w.answer_domain is not None:
        queries = [list(v)[0] for v in w.input_samples] + \
            [v[0] for v in w.sample_inputs(random.Random(f"queries:{w.name}"), 200, tries=2000)]
        if not queries:
            problems.append("the solver has no query to try: add sample_input lines")
            return None
    admit = (lambda v: d.check(v) is None) if w.answer_domain is not None else (lambda v: w.admits([v]) is None)
    worst = 0
    replies: dict = {}  # the box's replies to (guess, candidate), shared by its targets' solvers
    for c in distinct:
        kept = "defect" in c.marks
        found: list[str] = []
        if size is not None and size <= MAX_ENUM:
            turns = check_enumerated(w, d, admit, c.expected, queries, found, notes, replies)
        else:
            turns = check_sampled(w, d, size, admit, c.expected, queries, found, notes, replies)
        if not kept:
            problems += found
            if turns is None:
                return None
        elif not found:
            problems.append(f"{c.id} is marked defect, but a consistent-guess solver pins its target down: "
                            "remove the mark")
        else:
            warnings += [f"{c.id} (a published defect, kept): {x}" for x in found]
        worst = max(worst, turns or 0)
    return worst


def check_enumerated(w, d, admit, target, queries, problems, notes, replies=None) -> int | None:
    """The solver over every candidate; on a hard box the candidates cannot simply be tried in order."""
    cands = [v for v in d.enumerate() if admit(v)]
    turns, _ = solve_by_elimination(w, cands, w.budget.turns, target, queries, replies=replies)
    shown = w.format_answer(target)
    if turns is None:
        problems.append(f"a consistent-guess solver does not pin the target {shown} down within "
                        f"{w.budget.turns} turns ({len(cands)} candidates)")
    else:
        notes.append(f"a consistent-guess solver pins the target {shown} down in {turns} of "
                     f"{w.budget.turns} turns ({len(cands)} candidates)")
    position = next((i for i, c in enumerate(cands) if same(c, target)), None)
    if w.difficulty == "hard" and queries is None and position is not None and position < w.budget.turns:
        problems.append(f"a hard puzzle's target {shown} is among the first {w.budget.turns} candidates: "
                        "trying inputs in order finds it")
    return turns


def check_sampled(w, d, size, admit, target, queries, problems, notes, replies=None) -> int | None:
    """A domain too large to enumerate: the solver over sampled candidates, then an independent sample
    says, with a stated confidence, how much of the domain its queries leave consistent."""
    shown = w.format_answer(target)
    rng = random.Random(f"candidates:{w.name}:{w.seed}")
    pool = _distinct(d, admit, rng, SAMPLED_CANDIDATES, exclude=target)
    turns, e = solve_by_elimination(w, sorted(pool + [target], key=_order), w.budget.turns, target, queries,
                                    replies=replies)
    what = f"{magnitude(size)} values" if size is not None else "unboundedly many values"
    if turns is None:
        problems.append(f"a consistent-guess solver does not pin the target {shown} down within "
                        f"{w.budget.turns} turns, even among {len(pool)} sampled candidates")
        return None
    fresh = _distinct(d, admit, random.Random(f"check:{w.name}:{w.seed}"), SAMPLED_CANDIDATES, exclude=target)
    alive = sum(e.consistent(c) for c in fresh)
    bound = binomial_upper(alive, len(fresh), CONFIDENCE)
    notes.append(f"the target's domain has {what}, too many to enumerate (at most {MAX_ENUM:,}), so it is "
                 f"checked by sampling: a consistent-guess solver pins the target {shown} down among "
                 f"{len(pool)} sampled candidates in {turns} of {w.budget.turns} turns; {alive} of {len(fresh)} "
                 f"further candidates, drawn uniformly, stay consistent with its queries, so with "
                 f"{CONFIDENCE:.0%} confidence at most {bound:.2%} of the domain does")
    return turns


def _order(v):
    return (render(v) if not isinstance(v, (int, float)) else "", v if isinstance(v, (int, float)) else 0)


def _distinct(d, admit, rng: random.Random, n: int, exclude) -> list:
    """Up to n distinct admitted values drawn uniformly from a domain (not `exclude`)."""
    seen: dict = {}
    for _ in range(n * 10):
        v = d.uniform(rng)
        key = render(v)
        if key not in seen and not same(v, exclude) and admit(v):
            seen[key] = v
            if len(seen) >= n:
                break
    return list(seen.values())


def binomial_upper(k: int, n: int, confidence: float) -> float:
    """The one-sided Clopper-Pearson upper bound on a proportion after k successes in n trials."""
    if n == 0:
        return 1.0
    if k >= n:
        return 1.0
    alpha = 1 - confidence
    lo, hi = k / n, 1.0
    for _ in range(60):  # bisection: P(X <= k | p) falls as p grows
        mid = (lo + hi) / 2
        if _binom_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def _binom_cdf(k: int, n: int, p: float) -> float:
    if p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(p)
            + (n - i) * math.log1p(-p) for i in range(k + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * sum(math.exp(x - top) for x in logs))


def magnitude(n: int) -> str:
    """A count as a person reads it: 11,881,376, or about 10^390."""
    return f"{n:,}" if n < 10 ** 9 else f"about 10^{len(str(n)) - 1}"


def _space(w) -> int | None:
    """The number of input combinations, when every domain is finite."""
    total = 1
    for _, d in w.inputs:
        k = d.size()
        if k is None:
            return None
        total *= k
    return total


# ---------------------------------------------------------------- the simplest hypotheses of each family


def _caesar(s: str, k: int) -> str:
    out = []
    for c in s:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - 97 + k) % 26 + 97))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)


def _atbash(s: str) -> str:
    return "".join(chr(219 - ord(c)) if "a" <= c <= "z" else chr(155 - ord(c)) if "A" <= c <= "Z" else c
                   for c in s)


def _invert(s: str) -> str:
    return "".join({"0": "1", "1": "0"}.get(c, c) for c in s)


def _one(fn):
    def h(args):
        if len(args) != 1:
            raise TypeError("one input only")
        return fn(args[0])
    return h


STOCK = {
    "CII": {
        "identity": _one(lambda x: x), "sorted": _one(sorted), "reversed": _one(lambda x: x[::-1]),
        "sum": _one(sum), "length": _one(len), "maximum": _one(max), "minimum": _one(min),
        "first": _one(lambda x: x[0]), "last": _one(lambda x: x[-1]),
        "sorted descending": _one(lambda x: sorted(x, reverse=True)),
        "first argument": lambda a: a[0], "sum of arguments": lambda a: sum(a),
        "product of arguments": lambda a: math.prod(a),
    },
    "CRI": {
        "identity": _one(lambda x: x), "inverted": _one(_invert), "reversed": _one(lambda x: x[::-1]),
        "parity": _one(lambda x: str(x.count("1") % 2)), "all ones": _one(lambda x: "1" * len(x)),
        "all zeros": _one(lambda x: "0" * len(x)),
        "and of all bits": _one(lambda x: "1" if set(x) == {"1"} else "0"),
        "or of all bits": _one(lambda x: "1" if "1" in x else "0"),
    },
    "ERI": {
        "identity": _one(lambda x: x), "reversed": _one(lambda x: x[::-1]), "atbash": _one(_atbash),
        "upper case": _one(lambda x: x.upper()),
        **{f"caesar {k}": _one(lambda x, k=k: _caesar(x, k)) for k in range(1, 26)},
    },
    "PSI": {
        "first input": lambda a: a[0], "last input": lambda a: a[-1], "product of inputs": lambda a: math.prod(a),
        "sum of inputs": lambda a: sum(a),
    },
}


# ---------------------------------------------------------------- across the boxes of a folder


def cross_checks(boxes) -> list[str]:
    """Hard boxes that an easy box of the same family answers completely (or whose target it hides)."""
    out = []
    for hard, easy in hard_easy_pairs(boxes):
        if hard.has_goal != easy.has_goal or len(easy.inputs) != len(hard.inputs):
            continue
        if hard.has_goal:
            if any(same(a, b) for a in easy.targets for b in hard.targets) and easy.inputs == hard.inputs:
                out.append(f"{hard.source}: it hides the same target as the easy box {easy.name!r}")
        elif all(c.plain for c in hard.tests) and all(answers(easy, c, hard.grading) for c in hard.tests):
            out.append(f"{hard.source}: the easy box {easy.name!r} answers every test of this hard box")
    return out


def answers(w, case, grading) -> bool:
    """Whether box w admits a test's input and computes its expected answer (as `grading` compares)."""
    values = list(case.values)
    if w.admits(values) is not None:
        return False
    got = outcome(w, values)
    return got[0] == "ok" and grading.close(got[1], case.expected)
