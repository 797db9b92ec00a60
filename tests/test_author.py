"""`worldspec author` against the fake OpenAI server (real HTTP through litellm, conftest's `fake_openai`):
the check's diagnostics steer the drafts, the test pass adds held-out tasks, and failures end clearly."""

from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, EXIT_PROBLEMS, certification, main
from worldspec.compiler import load_world, resolve_world_path
from worldspec.compiler.suite import world_files
from worldspec.runner import sandbox
from worldspec.runner.authoring import AUTHOR_KINDS, extract_items, extract_world, kind_material
from worldspec.runner.log import read_events

DEMO = open(resolve_world_path("demo"), encoding="utf-8").read()
# a syntax error: a rule's title without quotes
SYNTAX_ERROR = DEMO.replace('rule R1 "integer literals are offset" {', "rule R1 integer literals are offset {")
# compiles, but the rule breaks two reference solutions and leaves R2 required by no task; a new world, in
# language 3 (where a rule required by one task is a problem, not the warning of an older world)
UNCERTIFIABLE = DEMO.replace("kind program", "language 3\nkind program", 1).replace("herring H1 SHATTER", '''rule R6 "GAUGE hides a phantom" {
  op GAUGE(xs) = len(xs) + 1
  statement "GAUGE counts one element more than xs has."
  equation  "(+ (len xs) 1)"
}

herring H1 SHATTER''')
GOOD_TASK = '''task T8 band apply depth single-step shape flat set base {
  prompt "Print the second element of the list xs."
  input  xs: list[int]
  case   [1, 2, 3]
  case   [9, 8]
  case   [4, 5]
  case   [0, 5, 6]
  case   [7, 8, 9, 10]
  expect get(xs, 1)
  solution "EMIT(PLUCK(xs, GAUGE(STRAND(0, 0))))"
  naive    "EMIT(PLUCK(xs, 1))"
}
'''
BAD_TASK = GOOD_TASK.replace("T8", "T9").replace('solution "EMIT(PLUCK(xs, GAUGE(STRAND(0, 0))))"',
                                                 'solution "EMIT(PLUCK(xs, 1))"')
FIXED_TASK = GOOD_TASK.replace("T8", "T9").replace("[0, 5, 6]", "[0, 6, 6]")  # the repair of BAD_TASK
BRIEF = "a tiny calculation language whose manual is wrong in five places"


def wrapped(i: int, text: str) -> str:
    """Drafts come back in the shapes models use: a marked block, the bare file, an unmarked block."""
    return [f"Here is the world.\n\n```world\n{text}```\n",
            text,
            f"Fixed:\n```\n{text}```\nI removed the rule that broke the solutions.\n"][i % 3]


def author_server(server, drafts):
    """Answer draft rounds with DRAFTS (the last one repeated) and the test pass with two tasks."""
    def respond(body):
        msgs = body["messages"]
        if "# A certified world" in msgs[1]["content"] and len(msgs) > 2:  # the repair of the rejected ones
            return {"content": f"Corrected:\n```\n{FIXED_TASK}```\n", "usage": (900, 200)}
        if "# A certified world" in msgs[1]["content"]:
            return {"content": f"```\n{GOOD_TASK}```\n\nand\n\n```\n{BAD_TASK}```\n", "usage": (900, 200)}
        n = sum(m["role"] == "assistant" for m in msgs)
        return {"content": wrapped(n, drafts[min(n, len(drafts) - 1)]), "usage": (1000, 300)}
    server.responder = respond


def author(server, out, *extra):
    args = ["author", BRIEF, "--model", "openai/fake-author", "--api-base", server.base_url, "--out", str(out),
            "--no-cache", "--max-retries", "1", *extra]
    return CliRunner().invoke(main, args)


def events(out):
    return list(read_events(out.parent / (out.name + ".author") / "log.jsonl"))


def test_a_syntax_error_then_an_uncertifiable_rule_then_a_certified_world(fake_openai, tmp_path):
    author_server(fake_openai, [SYNTAX_ERROR, UNCERTIFIABLE, DEMO])
    out = tmp_path / "mine.world"
    r = author(fake_openai, out, "--extra", "2")
    assert r.exit_code == 0, r.output
    assert "certified in 3 round(s)" in r.output and "Traceback" not in r.output
    # progress per round, the test pass and the costs
    for line in ("round 1/6: does not compile (1 diagnostic)", "round 2/6: compiles, 4 certification problems",
                 "round 3/6: certified (7 tasks)", "test pass: item 1 accepted", "test pass: item 2 rejected",
                 "test pass: 1 task item(s) rejected; asking for corrected ones", "test pass: item 3 accepted",
                 "2 held-out item(s) added, 1 rejected",
                 "cost: 5 model call(s) (5 live, 0 from the cache, 0 from the transcript's log), "
                 "4800 input + 1300 output tokens"):
        assert line in r.output
    # the file written is the certified draft with the accepted held-out tasks (one a repair), and it certifies
    assert out.read_text() == DEMO.rstrip("\n") + "\n\n" + GOOD_TASK + "\n" + FIXED_TASK
    assert [t.id for t in load_world(str(out)).tasks][-2:] == ["T8", "T9"]
    assert CliRunner().invoke(main, ["check", str(out)]).exit_code == 0
    # each diagnostic went back verbatim: the round files and the requests the server saw
    folder = tmp_path / "mine.world.author"
    check1, check2 = (folder / "round-1-check.txt").read_text(), (folder / "round-2-check.txt").read_text()
    assert check1.splitlines()[2] == "round-1.world:51:9: error: unexpected 'integer'"
    assert "task T1: the reference solution fails in the true world" in check2
    prompt2, prompt3 = (folder / "round-2-prompt.md").read_text(), (folder / "round-3-prompt.md").read_text()
    assert check1.split("\n\n", 1)[1].strip() in prompt2 and "does not compile" in prompt2
    assert check2.split("\n\n", 1)[1].strip() in prompt3 and "certification failed" in prompt3
    # the rejected task went back with its check, in the test pass's conversation
    repair = fake_openai.requests[-1]["messages"]
    assert len(repair) == 4 and "1 of your task items were rejected" in repair[3]["content"]
    assert "T9" in repair[3]["content"] and "reference solution fails" in repair[3]["content"]
    assert repair[3]["content"] == (folder / "items-repair-prompt.md").read_text()
    drafts = [b for b in fake_openai.requests if "# A certified world" not in b["messages"][1]["content"]]
    assert [len(b["messages"]) for b in drafts] == [2, 4, 6]
    assert "its second line `language 3`" in drafts[0]["messages"][1]["content"]  # new worlds state their edition
    assert drafts[2]["messages"][3]["content"] == prompt2 and drafts[2]["messages"][5]["content"] == prompt3
    assert [(folder / f"round-{n}.world").read_text() for n in (1, 2, 3)] == [SYNTAX_ERROR, UNCERTIFIABLE, DEMO]
    # logged like a run: requests and replies through the runtime, one event per round and item
    log = events(out)
    assert log[0]["type"] == "header" and log[0]["config"]["command"] == "author"
    assert [e["certified"] for e in log if e["type"] == "author_round"] == [False, False, True]
    assert [e["accepted"] for e in log if e["type"] == "author_item"] == [True, False, True]
    assert sum(e["type"] == "reply" for e in log) == 5 and log[-1]["status"] == "success"


def test_a_model_that_never_converges_stops_at_max_rounds_and_keeps_the_best_draft(fake_openai, tmp_path):
    author_server(fake_openai, [SYNTAX_ERROR, UNCERTIFIABLE, SYNTAX_ERROR])
    out = tmp_path / "never.world"
    r = author(fake_openai, out, "--max-rounds", "3")
    assert r.exit_code == EXIT_PROBLEMS, r.output
    assert len(fake_openai.requests) == 3  # no test pass for a world that is not certified
    assert "not certified after 3 round(s); the best draft (round 2, 4 problem(s))" in r.output
    assert "rule R2 (PLUCK counts from one) is required by no task" in r.output
    assert out.read_text() == UNCERTIFIABLE  # the best draft, one that compiles, though the last did not
    assert (tmp_path / "never.world.author" / "best.world").read_text() == UNCERTIFIABLE


def test_when_no_draft_compiles_the_file_is_not_written_and_resume_asks_nothing_again(fake_openai, tmp_path):
    author_server(fake_openai, [SYNTAX_ERROR, "I cannot write that world."])
    out = tmp_path / "none.world"
    r = author(fake_openai, out, "--max-rounds", "2")
    assert r.exit_code == EXIT_PROBLEMS, r.output
    assert "no draft compiled in 2 round(s)" in r.output and not out.exists()
    assert (tmp_path / "none.world.author" / "best.world").read_text() in (SYNTAX_ERROR, "I cannot write that world.\n")
    # the same command again is refused without --resume; with it, the log's replies are reused
    r = author(fake_openai, out, "--max-rounds", "2")
    assert r.exit_code == EXIT_INPUT and "--resume" in r.output
    fake_openai.clear()
    r = author(fake_openai, out, "--max-rounds", "2", "--resume")
    assert r.exit_code == EXIT_PROBLEMS and fake_openai.requests == []
    assert "2 from the transcript's log" in r.output


def test_calls_share_the_response_cache_and_the_retries_of_worldspec_run(fake_openai, tmp_path):
    author_server(fake_openai, [SYNTAX_ERROR])
    fake_openai.fail_next("429", n=1)
    cache = ["--cache", str(tmp_path / "cache"), "--max-retries", "2", "--retry-delay", "0", "--max-rounds", "2"]
    r = CliRunner().invoke(main, ["author", BRIEF, "--model", "openai/fake-author", "--api-base",
                                  fake_openai.base_url, "--out", str(tmp_path / "a.world"), *cache])
    assert r.exit_code == EXIT_PROBLEMS and "(2 live, 0 from the cache" in r.output and "1 retries" in r.output
    assert len(fake_openai.requests) == 3
    # another --out, the same brief (from a file): every reply comes from the cache (the feedback names the
    # draft, not --out)
    (tmp_path / "brief.md").write_text(BRIEF)
    r = CliRunner().invoke(main, ["author", "--from-file", str(tmp_path / "brief.md"), "--model",
                                  "openai/fake-author", "--api-base",
                                  fake_openai.base_url, "--out", str(tmp_path / "b" / "b.world"), *cache])
    assert r.exit_code == EXIT_PROBLEMS and "(0 live, 2 from the cache" in r.output and "0 input" in r.output
    assert len(fake_openai.requests) == 3


def test_a_bad_model_or_a_missing_key_fails_in_one_paragraph(fake_openai, tmp_path, monkeypatch):
    fake_openai.fail_next("401", n=10)
    r = author(fake_openai, tmp_path / "a.world")
    assert r.exit_code == EXIT_INPUT and "authentication failed" in r.output
    monkeypatch.delenv("OPENAI_API_KEY")
    for model, said in (("openai/gpt-nonesuch", "no API key"), ("nonesuch-model", "the model call failed")):
        r = CliRunner().invoke(main, ["author", BRIEF, "--model", model, "--out", str(tmp_path / f"{model[:4]}.world"),
                                      "--no-cache", "--max-retries", "1", "--quiet"])
        assert r.exit_code == EXIT_INPUT, r.output
        assert said in r.output and "Traceback" not in r.output
        assert r.output.strip().count("\n") == 0  # one paragraph
        assert not (tmp_path / f"{model[:4]}.world.author").exists()  # no reply: nothing kept, rerun as it was
    # a brief is required, and an existing world is never overwritten
    assert CliRunner().invoke(main, ["author", "--model", "m", "--out", str(tmp_path / "b.world")]).exit_code == 2
    (tmp_path / "c.world").write_text(DEMO)
    r = CliRunner().invoke(main, ["author", BRIEF, "--model", "m", "--out", str(tmp_path / "c.world")])
    assert r.exit_code == EXIT_INPUT and "already exists" in r.output


def test_a_world_is_extracted_from_the_shapes_replies_take():
    world = 'world "W" version 1\nkind program\n'
    assert extract_world(f"Sure.\n```world\n{world}```\nDone.") == world
    assert extract_world(f"```python\nprint(1)\n```\n```\n{world}```") == world  # the block with the world line
    assert extract_world(f"```world\n{world}") == world  # a reply cut off inside its block
    assert extract_world(f"  {world}  ") == world  # the whole reply
    assert extract_world(None) == "" and extract_world("   ") == ""
    items = extract_items(f"```\n# two\n{GOOD_TASK}\n{BAD_TASK}```\n```\ntest 5\ntest 6\n```", "task")
    assert items == [GOOD_TASK, BAD_TASK]
    assert extract_items("test 5\ntest 6\nnot a test", "test") == ["test 5\n", "test 6\nnot a test\n"]


def test_every_kind_has_its_reference_and_a_certified_example_of_that_kind():
    for kind, spec in AUTHOR_KINDS.items():
        doc, name, example = kind_material(kind)
        assert f"kind {kind}" in doc or f"kind `{kind}`" in doc or kind in doc.split("\n", 1)[0].lower()
        world = load_world(resolve_world_path(spec.example))
        assert world.kind == kind and name.endswith(".world") and f"kind {kind}" in example
        assert world.tasks  # the test pass adds to them


def test_a_draft_whose_certification_overruns_never_counts_as_compiling(fake_openai, tmp_path):
    author_server(fake_openai, [DEMO])
    out = tmp_path / "slow.world"
    r = author(fake_openai, out, "--max-rounds", "1", "--check-timeout", "0.01")
    assert r.exit_code == EXIT_PROBLEMS, r.output
    assert "round 1/1: certification did not finish within --check-timeout" in r.output
    assert "no draft compiled" in r.output and not out.exists()


def test_a_drafts_includes_resolve_next_to_out_and_no_hidden_draft_is_left_there(fake_openai, tmp_path):
    lines = DEMO.splitlines(keepends=True)
    start, end = lines.index(next(x for x in lines if x.startswith("task T1 "))), \
        lines.index(next(x for x in lines if x.startswith("budget {")))
    home = tmp_path / "worlds"
    home.mkdir()
    (home / "_part.world").write_text("".join(lines[start:end]))  # the tasks, beside the world to be
    main_text = "".join(lines[:start]) + 'include "_part.world"\n\n' + "".join(lines[end:])
    broken = main_text.replace('include "_part.world"', 'include "_part.world"\ninclude "_missing.world"')
    author_server(fake_openai, [broken, main_text])
    out = home / "mine.world"
    r = author(fake_openai, out, "--extra", "0", "--include-dir", str(home))
    assert r.exit_code == 0, r.output
    assert "round 2/6: certified (7 tasks)" in r.output and "certified in 2 round(s)" in r.output
    assert out.read_text() == main_text
    assert CliRunner().invoke(main, ["check", str(out)]).exit_code == 0
    # the missing include is named relative to --out's folder and the draft by its transcript name
    check1 = (home / "mine.world.author" / "round-1-check.txt").read_text()
    assert "round-1.world:" in check1 and "'_missing.world'" in check1
    assert str(home) not in check1 and ".worldspec-draft-" not in check1
    assert sorted(p.name for p in home.iterdir()) == ["_part.world", "mine.world", "mine.world.author"]
    # the folder, as a suite, holds the world alone: not the transcript's drafts (round-N.world, best.world)
    assert (home / "mine.world.author" / "round-1.world").exists() and world_files(str(home)) == [str(out)]


def test_an_overrun_names_check_timeout_for_author_and_timeout_for_check(fake_openai, tmp_path, monkeypatch):
    def overrun(*args, **kwargs):  # every certification overruns, whatever the machine's speed
        raise sandbox.Overrun(0.01, "time")

    monkeypatch.setattr(sandbox, "certify_once", overrun)
    author_server(fake_openai, [DEMO])
    out = tmp_path / "slow.world"
    r = author(fake_openai, out, "--max-rounds", "2", "--check-timeout", "0.01")
    assert r.exit_code == EXIT_PROBLEMS, r.output
    check = (tmp_path / "slow.world.author" / "round-1-check.txt").read_text()
    assert "raise --check-timeout" in check and "raise --timeout" not in check
    assert "raise --check-timeout" in fake_openai.requests[1]["messages"][3]["content"]  # what the model was told
    report, _ = certification(resolve_world_path("demo"), None, None, 0.01)
    assert "raise --timeout for a slow machine" in report["problems"][0]
    r = CliRunner().invoke(main, ["check", "demo", "--timeout", "0.01"])
    assert r.exit_code == EXIT_PROBLEMS and "raise --timeout" in r.output


def test_a_reply_with_a_lone_surrogate_is_a_diagnostic_not_a_crash(fake_openai, tmp_path):
    lone = "\ud800"  # UTF-8 cannot encode it; a provider sends it as the JSON escape
    # a draft in language 3, where an unknown escape is an error (an older world is only warned)
    author_server(fake_openai, [DEMO.replace('world "Demo" version 1', f'world "De{lone}mo" version 1\nlanguage 3'),
                                DEMO])
    out = tmp_path / "lone.world"
    r = author(fake_openai, out, "--extra", "0")
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output and "round 1/6: does not compile (1 diagnostic)" in r.output
    folder = tmp_path / "lone.world.author"
    assert "unknown escape" in (folder / "round-1-check.txt").read_text()  # written as its escape \ud800
    assert '"De\\ud800mo"' in (folder / "round-1.world").read_text(encoding="utf-8")
    assert out.read_text() == DEMO


def test_an_out_that_names_no_file_is_refused_before_any_call(fake_openai, tmp_path):
    author_server(fake_openai, [DEMO])
    for out in ("", str(tmp_path / "folder") + "/"):
        r = author(fake_openai, out)
        assert r.exit_code == EXIT_INPUT and "names no file" in r.output, r.output
    assert fake_openai.requests == [] and not list(tmp_path.iterdir())
