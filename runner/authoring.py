"""Authoring a world with a model: drafts, the checks that steer them, the transcript that keeps them.

The construction pipeline of the Oracle paper (../shared/seeds/oracle-benchmark.txt: "Three
LLM-based Modules, Coding LLM, Test LLM, Refinement LLM, cooperate to construct a black-box from
scratch only with natural language description ... Test LLM and Refinement LLM work iteratively
until the generated platform code is correct") writes Python that nobody certifies. Here the
coding and refinement model is one conversation and the refiner's judge is the toolkit itself:

* `draft_round`s: the model gets the kind's reference doc, one bundled world of that kind and the
  brief, and writes a complete .world file (`extract_world` takes it from a fenced block or the
  whole reply). Each draft is checked exactly as `worldspec check` does (`check_draft`), and the
  located diagnostics (the spec does not compile) or certification problems (it compiles but is
  not certified) go back verbatim, asking for a corrected complete file.
* the test pass (`extra_items`, the paper's Test LLM): a fresh conversation asks for held-out
  tasks or test questions of the certified world; each (`extract_items`) is kept only if the
  world with it added still compiles, certifies, and has one more task. The rejected ones go
  back once, with their checks, asking for corrected items (`items_repair_prompt`).

Drafts are checked in a private temporary folder that holds the draft and copies of the files the
user named for it (`--include-dir`: each folder's .world files, at the path they have relative to
--out's folder), so that an `include "parts/a.world"` is found where the finished world finds it,
and nothing else is: a draft is the model's text, and a diagnostic quotes the lines it points
into, so an include of any other file beside --out (a key, a private world) would send that
file's lines back to the model. A diagnostic located in a file the model did not write is sent
without its source line. The user's file is written only at the end.

Every model call goes through runtime.Runtime (log replay, response cache, retries, the run
log's request and reply events); each round's draft, check and reply are also written as plain
files of the transcript folder (`Transcript`), next to the log.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import attrs

from worldspec.bounded import TooLarge, read_capped, read_capped_text
from worldspec.commands import certification
from worldspec.compiler import resolve_world_path
from worldspec.diagnostics import SpecError, SpecErrors
from worldspec.parser import LANGUAGES
from worldspec.sources import MAX_SOURCE_BYTES, is_inside

from .log import RunLog
from .models import Model, Reply, Request
from .runtime import Runtime
from .sandbox import RemoteSpecError

DOCS = Path(__file__).resolve().parent.parent / "docs"
MAX_INPUT_BYTES = 2_000_000  # a brief, a reference doc, an example world (docs/language.md is about 60 kB)


@attrs.frozen
class AuthorKind:
    """What a model is shown to write a world of one kind, and what its test pass asks for."""

    doc: str  # the reference, under docs/
    example: str  # a bundled world of the kind (a name resolve_world_path knows)
    item: str  # the keyword of one held-out task or test question
    items: str  # what the test pass asks for, in words


AUTHOR_KINDS = {
    "program": AuthorKind("language.md", "demo", "task",
                          "held-out tasks (each with cases, expect, a reference solution and a naive answer)"),
    "blackbox": AuthorKind("oracle-worlds.md", "oracle-extra/cii-e03-count-the-vowels", "test",
                           "test questions (`test` lines or blocks; their answers are computed, never typed)"),
    "game": AuthorKind("oracle-worlds.md", "oracle-extra/gsi-e03-the-mirror", "test",
                       "test games (`test H` lines: a horizon, optionally a normaliser)"),
    "proof": AuthorKind("proof-worlds.md", "alienlogic", "task",
                        "held-out tasks (each a goal with its premises and a reference proof, or a certified "
                        "unprovable goal)"),
}


class AuthorSetupError(Exception):
    """The authoring cannot start: a reference or an example that cannot be read."""


def read_text(path: str | os.PathLike, what: str) -> str:
    """A file's text (at most MAX_INPUT_BYTES), or AuthorSetupError naming it."""
    try:
        return read_capped_text(path, MAX_INPUT_BYTES, f"{what} {path}")
    except TooLarge as e:
        raise AuthorSetupError(f"{e}: a brief, a reference or an example is a few hundred kB at most") from None
    except (OSError, UnicodeDecodeError) as e:
        raise AuthorSetupError(f"cannot read {what} {path}: {getattr(e, 'strerror', None) or e}") from None


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write a model's text as UTF-8; a lone surrogate it held (UTF-8 cannot encode one) is written as
    its escape `\\udXXX`, which a draft's check then reports like any other text."""
    Path(path).write_text(text, encoding="utf-8", errors="backslashreplace")


def kind_material(kind: str, doc: str | None = None, example: str | None = None) -> tuple[str, str, str]:
    """(reference text, example world's name, example text) a model is shown for KIND."""
    spec = AUTHOR_KINDS[kind]
    doc_path = doc or DOCS / spec.doc
    if doc is None and not Path(doc_path).exists():
        raise AuthorSetupError(f"the {kind} reference {doc_path} is not here (the docs/ folder comes with a "
                               "source checkout); give one with --doc FILE")
    example_path = resolve_world_path(example or spec.example)
    return read_text(doc_path, "the reference"), os.path.basename(example_path), \
        read_text(example_path, "the example world")


# ---------------------------------------------------------------------------------- replies


FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)\n(?P<body>.*?)(?:^(?P=fence)[ \t]*$|\Z)",
                   re.M | re.S)
WORLD_LINE = re.compile(r'^\s*world\s+"', re.M)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block; a block the reply left open runs to its end."""
    return [(m["info"].strip().lower(), m["body"]) for m in FENCE.finditer(text)]


def extract_world(reply: str | None) -> str:
    """The .world file of a reply: the longest block marked `world`, else the longest block holding a
    `world "..."` line, else the longest block, else the whole reply."""
    text = (reply or "").strip()
    blocks = fenced_blocks(text)
    for keep in (lambda info, body: info.split()[:1] == ["world"],
                 lambda info, body: bool(WORLD_LINE.search(body)),
                 lambda info, body: True):
        bodies = [body for info, body in blocks if keep(info, body)]
        if bodies:
            return max(bodies, key=len).strip() + "\n"
    return text + "\n" if text else ""


def extract_items(reply: str | None, keyword: str) -> list[str]:
    """The spec items of a reply that begin with KEYWORD (each from its line at column 0 to the next),
    from its fenced blocks, or from the whole reply when it has none."""
    text = reply or ""
    bodies = [body for _, body in fenced_blocks(text)] or [text]
    start = re.compile(rf"^{re.escape(keyword)}\b", re.M)
    items = []
    for body in bodies:
        marks = [m.start() for m in start.finditer(body)]
        items += [body[a:b].strip() + "\n" for a, b in zip(marks, marks[1:] + [len(body)])]
    return items


# ---------------------------------------------------------------------------------- checks


@attrs.frozen
class Check:
    """What `worldspec check` says of one draft."""

    compiles: bool
    problems: tuple[str, ...]  # the located diagnostics, or the certification problems
    report: dict | None = None

    @property
    def certified(self) -> bool:
        return self.compiles and not self.problems

    @property
    def rank(self) -> tuple[int, int]:
        """Lower is better: a draft that compiles, then the fewest problems."""
        return (0 if self.compiles else 1, len(self.problems))

    @property
    def tasks(self) -> int:
        return int((self.report or {}).get("tasks") or 0)

    def summary(self) -> str:
        n = len(self.problems)
        if self.certified:
            return f"certified ({self.tasks} tasks)"
        if (self.report or {}).get("overrun"):
            return "certification did not finish within --check-timeout"
        if not self.compiles:
            return f"does not compile ({n} diagnostic{'s' if n != 1 else ''})"
        return f"compiles, {n} certification problem{'s' if n != 1 else ''}"

    def feedback(self) -> str:
        """The check's output, verbatim, as the model is shown it."""
        if not self.compiles:
            return "\n".join(self.problems)
        return f"{len(self.problems)} problem(s):\n" + "\n".join(f"  - {p}" for p in self.problems)


DIAGNOSTIC = re.compile(r"^(?P<file>\S.*?):\d+:\d+: error:", re.M)  # the first line of one located diagnostic
CARET = re.compile(r"^\s*\^$")


class IncludeError(AuthorSetupError):
    """An --include-dir that cannot be offered to the drafts."""


def include_files(home: str, folders) -> tuple[tuple[str, bytes], ...]:
    """(path relative to HOME, bytes) of the .world files directly in each of FOLDERS, the files a draft may
    include. Each folder must lie inside HOME (--out's folder: a world includes only files in its own
    folder tree); symbolic links and files that are not regular are left out; at most MAX_SOURCE_BYTES
    in all."""
    root = os.path.realpath(home)
    out, total = [], 0
    for folder in folders:
        real = os.path.realpath(folder)
        if not is_inside(root, real):
            raise IncludeError(f"--include-dir {folder} is not inside --out's folder {home}: a world includes "
                               "only files in its own folder or below it")
        rel = os.path.relpath(real, root)
        for entry in sorted(os.scandir(real), key=lambda e: e.name):
            if not entry.name.endswith(".world") or not entry.is_file(follow_symlinks=False):
                continue
            data = read_capped(entry.path, MAX_SOURCE_BYTES - total, f"the files of --include-dir {folder}")
            total += len(data)
            out.append((os.path.normpath(os.path.join(rel, entry.name)), data))
    return tuple(out)


def unquoted(entry: str, draft: str) -> str:
    """One rendered diagnostic, without its quoted source line (and caret) unless it points into DRAFT."""
    m = DIAGNOSTIC.match(entry)
    if m is None or m["file"] == draft:
        return entry
    lines = entry.split("\n")
    keep = [line for i, line in enumerate(lines)
            if not CARET.match(line) and not (i + 1 < len(lines) and CARET.match(lines[i + 1]))]
    return "\n".join(keep)


def check_draft(path: str, timeout: float | None = None, includes: tuple[tuple[str, bytes], ...] = ()) -> Check:
    """`worldspec check` of one draft file (in the sandbox, under the certification deadline), from a private
    temporary folder holding the draft and INCLUDES ((path relative to --out's folder, bytes), see
    include_files) and nothing else; diagnostics name the draft by its file name and its includes by their
    relative paths, and quote source lines of the draft only."""
    name = os.path.basename(path)
    with tempfile.TemporaryDirectory(prefix="worldspec-draft-") as folder:
        for rel, data in includes:
            target = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            Path(target).write_bytes(data)
        checked = os.path.join(folder, name)
        shutil.copyfile(path, checked)
        try:
            report, _ = certification(checked, None, None, timeout, "--check-timeout")
        except (SpecError, SpecErrors, RemoteSpecError) as e:
            # located by relative names only: the prompt, and so the cache key, is the same wherever --out is
            text = e.render().replace(os.path.join(folder, ""), "")
            # one entry per located diagnostic, each with its source lines and hint
            starts = [0] + [m.start() for m in DIAGNOSTIC.finditer(text)][1:]
            parts = [unquoted(text[a:b].rstrip(), name) for a, b in zip(starts, starts[1:] + [len(text)])]
            return Check(False, tuple(p for p in parts if p) or (text,))
    # a certification that overran may not even have compiled the draft: it never counts as compiling
    return Check(not report.get("overrun"), tuple(str(p) for p in report.get("problems", ())), report)


# ---------------------------------------------------------------------------------- transcript


class Transcript:
    """The transcript folder next to the world file: the run log (log.jsonl, through the runtime)
    and, per round, the prompt sent, the reply, the draft and its check, as plain files."""

    def __init__(self, log: RunLog):
        self.log = log
        self.dir = log.dir

    def write(self, name: str, text: str) -> Path:
        path = self.dir / name
        write_text(path, text)
        return path

    def round(self, n: int, prompt: str, reply: Reply, check: Check) -> None:
        """Keep round N's prompt, reply and check (its draft is round-N.world) and log its outcome."""
        self.write(f"round-{n}-prompt.md", prompt)
        self.write(f"round-{n}-reply.md", reply.content or "")
        self.write(f"round-{n}-check.txt", check.summary() + "\n\n" + check.feedback() + "\n")
        self.log.emit({"type": "author_round", "id": f"author_round:{n}", "round": n, "draft": f"round-{n}.world",
                       "compiles": check.compiles, "certified": check.certified, "problems": list(check.problems)})


# ---------------------------------------------------------------------------------- prompts


ROLE = ("You write world specifications for worldspec, a toolkit whose compiler and certifier check every "
        "world.")
SYSTEM = ROLE + (" Reply with one complete .world file in a single fenced code block marked `world`; nothing "
                 "you write outside the block is used.")


def first_prompt(kind: str, brief: str, doc: str, example_name: str, example: str) -> str:
    return (f"# The reference for worlds of kind {kind}\n\n{doc}\n\n"
            f"# An example world of kind {kind} ({example_name}, certified)\n\n```world\n{example}\n```\n\n"
            f"# The brief\n\n{brief.strip()}\n\n"
            f"Write a complete .world file of kind {kind} for this brief, its second line `language "
            f"{max(LANGUAGES)}`. It must compile and pass "
            "`worldspec check` (certification). Reply with the whole file in one ```world fenced block.")


def repair_prompt(check: Check) -> str:
    what = ("The spec does not compile. `worldspec check` reported:" if not check.compiles else
            "The spec compiles, but certification failed. `worldspec check` reported:")
    return (f"{what}\n\n```\n{check.feedback()}\n```\n\n"
            "Fix these and reply with the corrected complete .world file (the whole file, not a diff) "
            "in one ```world fenced block.")


def items_prompt(kind: str, doc: str, world: str, count: int) -> str:
    spec = AUTHOR_KINDS[kind]
    return (f"# The reference for worlds of kind {kind}\n\n{doc}\n\n"
            f"# A certified world\n\n```world\n{world}\n```\n\n"
            f"Write {count} more {spec.items} for this world, held out: unlike the ones it has, each with a "
            f"new id where items have ids, each testing what the world hides. Write each `{spec.item}` item "
            "complete, as it would stand in the file, in its own fenced code block. Each is kept only if the "
            "world with it added still compiles and certifies (a reference solution must pass).")


def items_repair_prompt(spec: AuthorKind, rejected: list[tuple[str, str]]) -> str:
    reasons = "\n\n".join(f"## Item {i}\n\n```\n{item.rstrip()}\n```\n\nRejected: `worldspec check` of the world "
                          f"with it added reported:\n\n```\n{why}\n```" for i, (item, why) in enumerate(rejected, 1))
    return (f"{len(rejected)} of your {spec.item} items were rejected:\n\n{reasons}\n\n"
            f"Write a corrected version of each rejected item (the accepted ones are in the world now: do not "
            f"repeat their ids), each complete, in its own fenced code block.")


# ---------------------------------------------------------------------------------- the loop


@attrs.frozen
class Outcome:
    """How authoring ended."""

    rounds: int
    best: Check | None  # the best round's check (None: no round ran)
    best_round: int
    best_text: str
    accepted: tuple[str, ...] = ()  # held-out items added by the test pass
    rejected: tuple[tuple[str, str], ...] = ()  # (item, why)

    @property
    def certified(self) -> bool:
        return self.best is not None and self.best.certified


@attrs.frozen
class Author:
    """One authoring session's fixed parts (see the module docstring)."""

    runtime: Runtime
    model: Model
    kind: str
    doc: str
    check_timeout: float | None = None
    say: Callable[[str], None] = lambda line: None
    test_model: Model | None = None
    includes: tuple = ()  # (path relative to --out's folder, bytes) of the files a draft may include
    spent: list = attrs.field(factory=list)  # the usage of every live call

    async def ask(self, messages: list[dict], purpose: str, conv: str, t: int, prefix: int) -> Reply:
        """One model call through the runtime (log replay, cache, retries, logged)."""
        request = Request(messages=tuple(messages), purpose=purpose,
                          meta={"conv": conv, "t": t, "prefix": prefix})
        model = self.test_model if purpose == "author:items" and self.test_model else self.model
        live = self.runtime.stats.live
        reply = await self.runtime.call(model, request)
        if self.runtime.stats.live > live:
            self.spent.append(reply.usage)
        return reply

    def tokens(self) -> tuple[int, int]:
        """(input, output) tokens of the live calls."""
        return sum(u.input_tokens for u in self.spent), sum(u.output_tokens for u in self.spent)

    async def draft_rounds(self, brief: str, example_name: str, example: str, transcript: Transcript,
                           max_rounds: int) -> Outcome:
        """Ask, check and feed back until a draft certifies or MAX_ROUNDS drafts were checked."""
        prompt = first_prompt(self.kind, brief, self.doc, example_name, example)
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        best: tuple[Check, int, str] | None = None
        sent = 0
        for n in range(1, max_rounds + 1):
            self.say(f"round {n}/{max_rounds}: asking {self.model.name}")
            reply = await self.ask(messages, "author", "author", n, sent)
            sent = len(messages)
            draft = extract_world(reply.content)
            path = transcript.dir / f"round-{n}.world"
            transcript.write(path.name, draft)
            check = check_draft(str(path), self.check_timeout, self.includes) if draft.strip() else \
                Check(False, ("the reply held no .world file: write the complete file in one ```world block",))
            transcript.round(n, prompt, reply, check)
            self.say(f"round {n}/{max_rounds}: {check.summary()}")
            if best is None or check.rank <= best[0].rank:
                best = (check, n, draft)
            if check.certified:
                break
            prompt = repair_prompt(check)
            messages += [reply.message(with_tool_calls=False), {"role": "user", "content": prompt}]
        assert best is not None
        return Outcome(rounds=n, best=best[0], best_round=best[1], best_text=best[2])

    async def extra_items(self, world: str, check: Check, count: int, transcript: Transcript,
                          ) -> tuple[str, Check, list[str], list[tuple[str, str]]]:
        """The paper's test pass: (world with the accepted items, its check, accepted, rejected as (item, why)).
        Items rejected in the first reply go back with their reasons, once, for corrected ones."""
        spec = AUTHOR_KINDS[self.kind]
        prompt = items_prompt(self.kind, self.doc, world, count)
        self.say(f"test pass: asking {(self.test_model or self.model).name} for {count} {spec.item} item(s)")
        messages = [{"role": "system", "content": ROLE}, {"role": "user", "content": prompt}]
        reply = await self.ask(messages, "author:items", "author:items", 1, 0)
        transcript.write("items-prompt.md", prompt)
        transcript.write("items-reply.md", reply.content or "")
        accepted, rejected = [], []
        items = extract_items(reply.content, spec.item)[:count]
        world, check, first = self.try_items(world, check, items, 1, transcript, accepted, rejected)
        if not first:
            return world, check, accepted, rejected
        prompt = items_repair_prompt(spec, first)
        transcript.write("items-repair-prompt.md", prompt)
        self.say(f"test pass: {len(first)} {spec.item} item(s) rejected; asking for corrected ones")
        messages += [reply.message(with_tool_calls=False), {"role": "user", "content": prompt}]
        reply = await self.ask(messages, "author:items", "author:items", 2, 2)
        transcript.write("items-repair-reply.md", reply.content or "")
        items = extract_items(reply.content, spec.item)[:len(first)]
        world, check, _ = self.try_items(world, check, items, len(accepted) + len(rejected) + 1, transcript,
                                         accepted, rejected)
        return world, check, accepted, rejected

    def try_items(self, world: str, check: Check, items: list[str], first: int, transcript: Transcript,
                  accepted: list[str], rejected: list[tuple[str, str]]) -> tuple[str, Check, list[tuple[str, str]]]:
        """Add each item that keeps WORLD certified with one more task (numbered from FIRST in the
        transcript); (the world, its check, the items rejected here with why), appending to ACCEPTED
        and REJECTED."""
        now = []
        for i, item in enumerate(items, first):
            trial = world.rstrip("\n") + "\n\n" + item
            path = transcript.write(f"item-{i}.world", trial)
            got = check_draft(str(path), self.check_timeout, self.includes)
            if got.certified and got.tasks > check.tasks:
                world, check = trial, got
                accepted.append(item)
                why = None
            else:
                why = got.feedback() if not got.certified else "it adds no task"
                now.append((item, why))
            transcript.log.emit({"type": "author_item", "id": f"author_item:{i}", "item": item,
                                 "accepted": why is None, "why": why})
            self.say(f"test pass: item {i} " + ("accepted" if why is None else
                                                 "rejected: " + (got.problems or (why,))[0].splitlines()[0]))
        rejected += now
        return world, check, now
