"""The built-in agents: systems that need no network and no key.

Milestone worlds (`--agent NAME`):
  oracle    states the true rule equations and submits reference solutions
            (the pipeline's self-test: must score 100%);
  manual    trusts the manual: submits naive solutions (the recall-only floor);
  explorer  explores without a model: probes chosen by expected information gain over a
            hypothesis space built from the manual (the world's own explorer, api.explorer_of);
            states its most probable hypotheses, predicts by running programs under them and
            repairs naive answers (docs/explorer.md; reports label it "explorer (built-in, no model)"); in a
            proof world it tests rules with one-rule proofs and answers by bounded search under
            the rules it learned (docs/explorer.md, "Proof worlds"); not a default agent there;
  replay:DIR[#SYSTEM]  replays the replies of a recorded run (probes still run live).

Turn@shot worlds (black boxes, game boxes):
  oracle    knows f: answers every test with its reference answer (the ceiling);
  memorise  explores with the box's probe generator and answers each test from what
            it observed (World.answer_from says how: nearest input, best sequence, last guess).
  explorer  the LLM-free box explorer (runner/boxexplorer/): built from the box's view only (manual,
            declared domains, test questions), it reads its feedback back from the conversation and
            answers by its hypotheses (docs/explorer.md, "Black boxes"); not a default agent.

Pool worlds (games against an opponent pool): any strategy of the pool plays as an
agent (`--agent grim`), locally and without model calls.

Each protocol asks `milestone_agent`, `box_agent` or `strategy_agents` for its own.
"""
from __future__ import annotations

import json

import attrs

from worldspec.compiler.api import Explorable, PlayedTests, explorer_of

from .answers import extract_answer, fenced, reportable_rules, rule_line
from .boxexplorer.history import exploration
from .boxexplorer.strategies import strategy_for
from .boxexplorer.view import box_view
from .log import load_run
from .metrics import tool_exchanges
from .models import FatalError, Model, Reply, Request, ToolCall

REPLAY = "replay:"


class BuiltinAgent(Model):
    """A local agent of one world: explores, reports rules and answers tasks by its own lights."""

    cacheable = False
    reasks = False  # deterministic: the same question gets the same reply

    def __init__(self, world, probe_seed: int = 0):
        self.world = world
        self.probe_seed = probe_seed

    async def complete(self, request: Request) -> Reply:
        if request.purpose == "explore":
            return self.explore(request)
        if request.purpose == "rules":
            return Reply(content=fenced(self.rules()))
        if request.purpose.startswith("task:"):
            return Reply(content=fenced(self.answer(request.purpose[5:], request)))
        return Reply(content="")

    def explore(self, request: Request) -> Reply:  # pragma: no cover - each family explores its own way
        raise NotImplementedError

    def rules(self) -> str:
        return "UNKNOWN"

    def answer(self, task_id: str, request: Request) -> str:
        """The reference answer (an oracle's; the other agents answer their own way)."""
        return self.world.task(task_id).solution


# ----------------------------------------------------------------------------
# Milestone worlds


class MilestoneAgent(BuiltinAgent):
    """Explores with one generator probe at the start of each round (it exercises the tool path)."""

    def __init__(self, world, probe_seed: int = 0):
        super().__init__(world, probe_seed)
        self._probes: list[str] | None = None

    def probe(self, n: int) -> str:
        """The n-th of up to 16 generator probes whose charge fits one call."""
        if self._probes is None:
            self._probes = []
            cap = self.world.budget.units_per_call
            gen = self.world.probe_generator(self.probe_seed)
            for _ in range(500):
                p = next(gen)
                try:
                    if 0 < self.world.charge(p) <= cap:
                        self._probes.append(p)
                except Exception:  # noqa: BLE001 — a generator probe that cannot be charged is skipped
                    continue
                if len(self._probes) >= 16:
                    break
            if not self._probes:
                self._probes.append(next(self.world.probe_generator(self.probe_seed)))
        return self._probes[n % len(self._probes)]

    def explore(self, request: Request) -> Reply:
        round_starts = bool(request.messages) and request.messages[-1].get("role") == "user"
        if request.tools and request.tool_choice != "none" and round_starts:
            n = len(request.messages)
            args = json.dumps({self.world.tool.parameter: self.probe(n)})
            return Reply(content=None, tool_calls=(ToolCall(
                id=f"{self.name}_{n}", name=request.tools[0]["function"]["name"], arguments=args),))
        return Reply(content="Nothing more to probe this round.")


class OracleAgent(MilestoneAgent):
    name = model_id = "oracle"

    def rules(self) -> str:
        return "\n".join(rule_line(r) for r in reportable_rules(self.world)) or "UNKNOWN"


class ManualAgent(MilestoneAgent):
    name = model_id = "manual"

    def answer(self, task_id: str, request: Request) -> str:
        return self.world.task(task_id).naive


class ExplorerAgent(BuiltinAgent):
    """The world's built-in explorer. Its beliefs depend only on the (program, feedback) pairs of a
    conversation, so one session serves every trajectory: the weights after each sequence of exchanges
    are kept, and a request (a probe, a milestone asked after later probes) resumes from its own."""

    name = model_id = "explorer"

    def __init__(self, world, probe_seed: int = 0):
        super().__init__(world, probe_seed)
        self.session = explorer_of(world, probe_seed)
        if self.session is None:
            raise FatalError(f"the explorer does not apply to {world.name} (kind {world.kind}): "
                             "only worlds with a built-in explorer (program and proof worlds) have one")
        self.states: dict[tuple, dict] = {(): self.session.snapshot()}  # exchanges -> weights after them
        self.probes: dict[tuple, str] = {}  # exchanges -> the probe sent next

    def _at(self, messages) -> tuple:
        """Put the session in the state of this conversation (observing what it has not seen)."""
        exchanges = tuple(tool_exchanges(messages))
        k = len(exchanges)
        while exchanges[:k] not in self.states:
            k -= 1
        self.session.restore(self.states[exchanges[:k]])
        for i in range(k, len(exchanges)):
            self.session.observe(*exchanges[i])
            self.states[exchanges[:i + 1]] = self.session.snapshot()
        return exchanges

    def explore(self, request: Request) -> Reply:
        if request.tools and request.tool_choice != "none":
            exchanges = self._at(request.messages)
            if exchanges not in self.probes:
                self.probes[exchanges] = self.session.next_probe()
            args = json.dumps({self.world.tool.parameter: self.probes[exchanges]})
            return Reply(content=None, tool_calls=(ToolCall(
                id=f"explorer_{len(exchanges)}", name=request.tools[0]["function"]["name"], arguments=args),))
        return Reply(content="Nothing more to probe this round.")

    def answer(self, task_id: str, request: Request) -> str:
        self._at(request.messages)
        return self.session.answer(self.world.task(task_id))

    def _reply(self, request: Request) -> Reply:
        if request.purpose == "rules":
            self._at(request.messages)
            return Reply(content=fenced(self.session.report()))
        if request.purpose == "explore":
            return self.explore(request)
        if request.purpose.startswith("task:"):
            return Reply(content=fenced(self.answer(request.purpose[5:], request)))
        return Reply(content="")

    async def complete(self, request: Request) -> Reply:
        return self._reply(request)


class ReplayAgent(Model):
    """Replays a recorded run: replies looked up by (condition, trajectory, purpose,
    milestone, answer index, exploration step). Probes are executed live by the
    protocol, so feedback is recomputed, not copied."""

    cacheable = False
    reasks = False  # a recorded reply is looked up by its place in the run: asking again finds the same one

    def __init__(self, spec: str):
        path, _, system = spec.partition("#")
        self.dir = path
        try:
            logged = load_run(path)
        except FileNotFoundError as e:
            raise FatalError(f"replay: {e}") from None
        replies: dict[str, dict[tuple, dict]] = {}
        for ev in logged.replies.values():
            replies.setdefault(ev.get("system", ""), {})[replay_key(ev)] = ev["reply"]
        if not replies:
            raise FatalError(f"replay: {logged.path} records no replies")
        if not system:
            if len(replies) > 1:
                raise FatalError(f"replay: {logged.path} holds several systems ({', '.join(sorted(replies))}); "
                                 f"name one as replay:{path}#SYSTEM")
            system = next(iter(replies))
        if system not in replies:
            raise FatalError(f"replay: system {system!r} not in {logged.path} "
                             f"(found {', '.join(sorted(replies))})")
        self.recorded = replies[system]
        self.name = f"replay({system})"
        self.model_id = f"replay:{logged.path.parent.resolve()}#{system}"

    async def complete(self, request: Request) -> Reply:
        key = replay_key({**request.meta, "purpose": request.purpose, "answer_index": request.answer_index})
        rec = self.recorded.get(key)
        if rec is None:
            raise FatalError(f"replay: {self.dir} has no recorded reply for {key}")
        return Reply.from_json(rec)


def replay_key(d: dict) -> tuple:
    """Where a reply stands in its run, whoever gave it (a logged reply event or a request's meta)."""
    return (d.get("condition"), d.get("trajectory"), d.get("purpose"), d.get("t"),
            d.get("answer_index", 0), d.get("step"))


MILESTONE_AGENTS = {"oracle": OracleAgent, "manual": ManualAgent, "explorer": ExplorerAgent}


def default_milestone_agents(world) -> tuple[str, ...]:
    """The built-in agents a milestone world runs when none is named (the explorer where it applies)."""
    return tuple(a for a in MILESTONE_AGENTS if a != "explorer" or
                 (isinstance(world, Explorable) and getattr(world, "explorer_by_default", True)))


def milestone_agent(spec: str, world) -> Model:
    """The built-in agent `--agent SPEC` of a milestone world."""
    if spec.startswith(REPLAY):
        return ReplayAgent(spec[len(REPLAY):])
    if spec not in MILESTONE_AGENTS:
        raise FatalError(f"unknown agent {spec!r} (built-in agents: {', '.join(MILESTONE_AGENTS)}, "
                         f"{REPLAY}DIR[#SYSTEM])")
    return MILESTONE_AGENTS[spec](world)


# ----------------------------------------------------------------------------
# Turn@shot worlds


class BoxAgent(BuiltinAgent):
    """Sends the box's generator inputs in order, one per turn."""

    def __init__(self, world, probe_seed: int = 0):
        super().__init__(world, probe_seed)
        self._gen = world.probe_generator(probe_seed)
        self._probes: list[str] = []

    def probe(self, n: int) -> str:
        while len(self._probes) <= n:
            self._probes.append(next(self._gen))
        return self._probes[n]

    def explore(self, request: Request) -> Reply:
        n = sum(1 for m in request.messages if m.get("role") == "assistant")
        return Reply(content=fenced(self.probe(n)))

    async def complete(self, request: Request) -> Reply:
        """As every built-in agent; a test answer under published grading is written bare, as the released
        harness reads it (a round-by-round move too where the box reads moves as written)."""
        if writes_bare(request, self.world.published_applies, raw_moves(self.world)):
            return Reply(content=self.answer(request.purpose[5:], request))
        return await super().complete(request)

    @staticmethod
    def observed(request: Request) -> list[str]:
        """The inputs this agent sent during exploration (the box's reply to each follows it); a test's
        conversation also holds earlier tests, which are not inputs."""
        explored = request.meta.get("explored")
        messages = request.messages if explored is None else request.messages[:explored]
        return [text for m in messages if m.get("role") == "assistant"
                for text in [extract_answer(m.get("content"))] if text]


class BoxOracle(BoxAgent):
    """Knows f: answers every test with its reference answer (a game played round by round: the optimum's
    move in the position its earlier moves reached)."""

    name = model_id = "oracle"

    def answer(self, task_id: str, request: Request) -> str:
        moves = request.meta.get("moves")
        if moves is None:
            if request.meta.get("grading") == "published":
                return self.world.published_solution(task_id)
            return super().answer(task_id, request)
        game = self.world.test_play(task_id, request.meta.get("shot", 1), request.meta.get("grading", "lenient"))
        for move in moves:
            game.play(move)
        return game.best_move()


class Memoriser(BoxAgent):
    """Answers from what it observed; the world says how."""

    name = model_id = "memorise"

    def answer(self, task_id: str, request: Request) -> str:
        answer = self.world.answer_from(task_id, self.observed(request))
        moves = request.meta.get("moves")
        if moves is None:
            return answer
        # round by round: the next move of its best observed sequence, read back as the game reads a sequence
        # (a move such as `shoot 1` holds a space: answer_from joins those by commas)
        plan = self.world.parse_moves(answer) or [""]
        return plan[len(moves) % len(plan)]


class BoxExplorer(BoxAgent):
    """The LLM-free box explorer: a strategy built from `box_view(world)` alone (never f, targets or expected
    answers), fed the (input, output) pairs it reads back from the conversation, answering as a model would."""

    name = model_id = "explorer"

    def __init__(self, world, probe_seed: int = 0):
        Model.__init__(self)
        self.world = None  # the explorer keeps no handle on the box: only its view
        self.probe_seed = probe_seed
        self.view = box_view(world, seed=probe_seed)
        self.published_tests = {t.id: bool(world.published_applies(t.id)) for t in world.tasks}
        self.raw_moves = raw_moves(world)
        self.strategy = strategy_for(self.view)

    def explore(self, request: Request) -> Reply:
        return Reply(content=fenced(self.strategy.next_query(exploration(request.messages))))

    def answer(self, task_id: str, request: Request) -> str:
        test = self.view.test(task_id)
        history = exploration(request.messages)
        if request.meta.get("moves") is not None and hasattr(self.strategy, "play"):
            # a test game, round by round: the state is the conversation's last message
            return self.strategy.play(history, str(request.messages[-1].get("content") or ""))
        return self.strategy.answer(test, history, int(request.meta.get("shot") or 1))

    async def complete(self, request: Request) -> Reply:
        if writes_bare(request, self.published_tests.get, self.raw_moves):
            return Reply(content=self.answer(request.purpose[5:], request))
        return await BuiltinAgent.complete(self, request)


def raw_moves(world) -> bool:
    """Whether the world's test games read each move as written under published grading (a GSI box with its
    platform's reader); a world without round-by-round test games reads none."""
    return isinstance(world, PlayedTests) and bool(world.reads_moves_raw("published"))


def writes_bare(request: Request, published, raw: bool) -> bool:
    """Whether a built-in agent writes this test reply bare, as the released harness reads it: under
    published grading, an answer the released comparison reads (`published(task id)`) or, when `raw`, a
    round-by-round move; otherwise the reply is fenced."""
    if not request.purpose.startswith("task:") or request.meta.get("grading") != "published":
        return False
    if request.meta.get("moves") is not None:
        return raw
    return bool(published(request.purpose[5:]))


BOX_AGENTS = {"oracle": BoxOracle, "memorise": Memoriser}
# Agents a run names with --agent but does not play by default.
NAMED_BOX_AGENTS = {"explorer": BoxExplorer}
_BOX_ALIASES = {"memorize": "memorise", "memoriser": "memorise"}


def box_agent(spec: str, world) -> Model:
    """The built-in agent `--agent SPEC` of a turn@shot world."""
    name = _BOX_ALIASES.get(spec, spec)
    agent = BOX_AGENTS.get(name) or NAMED_BOX_AGENTS.get(name)
    if agent is None:
        raise FatalError(f"unknown agent {spec!r} for black boxes (built-in: "
                         f"{', '.join([*BOX_AGENTS, *NAMED_BOX_AGENTS])})")
    return agent(world)


# ----------------------------------------------------------------------------
# Pool worlds


@attrs.frozen
class StrategyAgent:
    """A strategy of the world's pool playing as a system (no model: its matches are computed)."""

    name: str
    strategy: object

    @property
    def model_id(self) -> str:
        return f"strategy:{self.name}"


def strategy_agents(world, names) -> list[StrategyAgent]:
    """The pool's strategies named `names`, in order."""
    out = []
    for n in names:
        try:
            out.append(StrategyAgent(n, world.strategy(n)))
        except KeyError:
            raise FatalError(f"unknown agent {n!r} for {world.name} (its strategies: "
                             f"{', '.join(o.name for o in world.opponents)})") from None
    return out
