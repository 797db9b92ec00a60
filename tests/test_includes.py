"""Includes reach only regular .world files inside the including world's folder tree.

A spec may come from a stranger, and diagnostics quote the files they point
into: an include that could read /etc/passwd would print its first line. Each
test builds a world folder in tmp_path with a real symlink, FIFO, device link,
non-UTF-8 file or `..` path, and checks the diagnostic (exit 2 through the
CLI) and that nothing of the outside file is shown.
"""
from __future__ import annotations

import os
import re

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import compile_spec
from worldspec.diagnostics import SpecError
from worldspec.parser import load_spec
from worldspec.sources import MAX_SOURCE_BYTES

HEAD = ('world "Main" version 1\nkind program\nseed 1\n'
        'base {\n  op ADD(a: int, b: int) -> int = a + b  "a plus b."\n}\n')
SECRET = "SECRET-LINE-do-not-print"
# a file outside the world's folder that would fail to parse on its first line (so a leak would quote it)
OUTSIDE = f'{SECRET} = (\ndef f(x) = x\n'


@pytest.fixture
def world(tmp_path):
    """A world folder `w/` with main.world, and a secret file outside it."""
    folder = tmp_path / "w"
    folder.mkdir()
    (tmp_path / "secret.world").write_text(OUTSIDE)
    return folder


def write_main(folder, include: str) -> str:
    path = folder / "main.world"
    path.write_text(HEAD + f'include "{include}"\n')
    return str(path)


def error_of(path: str) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value.render()


def assert_located_at_include(text: str, path: str) -> None:
    include_line = len(HEAD.splitlines()) + 1
    assert text.startswith(f"{path}:{include_line}:1: error: "), text
    assert text.splitlines()[1].startswith('  include "'), text
    assert SECRET not in text and "root:" not in text, text


def run_check(path: str):
    r = CliRunner().invoke(main, ["check", path])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    return r.output


def test_include_inside_the_folder_works(world):
    (world / "sub").mkdir()
    (world / "sub" / "defs.world").write_text('world "Defs" version 1\ndef twice(x) = x * 2\n')
    (world / "sub" / "more.world").write_text('world "More" version 1\ninclude "defs.world"\n')
    path = world / "main.world"
    path.write_text(HEAD.replace("a + b", "twice(a) + b") + 'include "sub/more.world"\n')
    w = compile_spec(load_spec(str(path)))
    assert w.probe("print(ADD(20, 2))").text == "42"


def test_dotdot_inside_the_folder_is_fine(world):
    (world / "sub").mkdir()
    (world / "defs.world").write_text('world "Defs" version 1\ndef twice(x) = x * 2\n')
    path = write_main(world, "sub/../defs.world")
    assert [d.name for d in load_spec(path).defs] == ["twice"]


def test_dotdot_out_of_the_folder_is_refused(world):
    path = write_main(world, "../secret.world")
    text = error_of(path)
    assert_located_at_include(text, path)
    assert "outside the world's folder" in text
    assert SECRET not in run_check(path)


def test_deep_dotdot_is_refused(world):
    path = write_main(world, "../../../../../../../../etc/x.world")
    assert "outside the world's folder" in error_of(path)


def test_symlink_leaving_the_folder_is_refused(world):
    os.symlink(world.parent / "secret.world", world / "inner.world")
    path = write_main(world, "inner.world")
    text = error_of(path)
    assert_located_at_include(text, path)
    assert "outside the world's folder" in text
    assert SECRET not in run_check(path)


@pytest.mark.skipif(not os.path.exists("/etc/passwd"), reason="needs /etc/passwd")
def test_symlink_to_etc_passwd_shows_nothing_of_it(world):
    os.symlink("/etc/passwd", world / "passwd.world")
    path = write_main(world, "passwd.world")
    text = error_of(path)
    assert_located_at_include(text, path)
    with open("/etc/passwd", encoding="utf-8", errors="replace") as f:
        first = f.readline().strip()
    out = run_check(path)
    assert first and first not in out and first not in text


def test_symlinked_folder_leaving_the_tree_is_refused(world):
    os.symlink(world.parent, world / "up")
    path = write_main(world, "up/secret.world")
    assert "outside the world's folder" in error_of(path)


def test_symlink_inside_the_folder_is_followed(world):
    (world / "real.world").write_text('world "R" version 1\ndef twice(x) = x * 2\n')
    os.symlink("real.world", world / "alias.world")
    path = write_main(world, "alias.world")
    assert [d.name for d in load_spec(path).defs] == ["twice"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_link_is_refused_without_reading(world):
    os.symlink("/dev/zero", world / "zero.world")
    path = write_main(world, "zero.world")
    text = error_of(path)  # outside the tree, so never opened
    assert_located_at_include(text, path)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_device_inside_the_tree_is_not_read(world, monkeypatch):
    # making a device node needs privileges: let the tree be all of / so that /dev/zero lies inside it
    monkeypatch.setattr("worldspec.parser.folder_of", lambda file: "/")
    os.symlink("/dev/zero", world / "zero.world")
    path = write_main(world, "zero.world")
    text = error_of(path)
    assert "is not a regular file" in text
    assert_located_at_include(text, path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_is_refused_and_does_not_hang(world):
    os.mkfifo(world / "pipe.world")  # nobody ever writes: opening it for reading would block
    path = write_main(world, "pipe.world")
    text = error_of(path)
    assert "is not a regular file" in text
    assert_located_at_include(text, path)
    run_check(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_as_the_world_itself_does_not_hang(world):
    os.mkfifo(world / "pipe.world")
    out = run_check(str(world / "pipe.world"))
    assert "is not a regular file" in out


def test_folder_named_like_a_world_is_refused(world):
    (world / "dir.world").mkdir()
    path = write_main(world, "dir.world")
    assert "is a folder" in error_of(path)


def test_non_utf8_include_is_located_in_that_file(world):
    (world / "latin.world").write_bytes('world "L" version 1\ndef caf\xe9(x) = x\n'.encode("latin-1"))
    path = write_main(world, "latin.world")
    text = error_of(path)
    assert text.startswith(f"{world / 'latin.world'}:2:8: error: the file is not UTF-8 text (byte 0xe9)"), text
    assert run_check(path).startswith(f"{world / 'latin.world'}:2:8:")


def test_encoded_surrogate_is_not_utf8(world):
    (world / "sur.world").write_bytes(b'world "S" version 1\nsummary "\xed\xa0\x80"\n')
    path = write_main(world, "sur.world")
    assert "not UTF-8" in error_of(path)


def test_oversized_include_is_refused_before_reading(world):
    big = world / "big.world"
    with open(big, "wb") as f:
        f.truncate(MAX_SOURCE_BYTES + 1)  # sparse: costs no disk
    path = write_main(world, "big.world")
    text = error_of(path)
    assert "is larger than 2,000,000 bytes" in text
    assert_located_at_include(text, path)


def test_includes_share_one_size_allowance(world):
    # eight files of 300 kB each fit the per-file cap but not the spec's total
    chunk = 'world "C" version 1\n' + "# padding\n" * 30_000
    for i in range(8):
        (world / f"c{i}.world").write_text(chunk)
    path = world / "main.world"
    path.write_text(HEAD + "".join(f'include "c{i}.world"\n' for i in range(8)))
    text = error_of(str(path))
    assert "is larger than 2,000,000 characters" in text
    assert re.match(rf"{re.escape(str(path))}:\d+:1: ", text), text


def test_repeated_includes_cannot_multiply(world):
    # a "billion laughs" of includes: each level includes the next ten times
    for level in range(6):
        nxt = f"l{level + 1}.world"
        (world / f"l{level}.world").write_text('world "L" version 1\n' + f'include "{nxt}"\n' * 10
                                               + "# " + "x" * 2000 + "\n")
    (world / "l6.world").write_text('world "L" version 1\n' + "# " + "x" * 2000 + "\n")
    path = write_main(world, "l0.world")
    assert "reaches more than 256 includes in all" in error_of(path)


def test_absolute_and_non_world_paths_are_refused(world):
    assert "cannot include '/etc/passwd'" in error_of(write_main(world, "/etc/passwd"))
    assert "cannot include 'notes.txt'" in error_of(write_main(world, "notes.txt"))


def test_a_folder_as_the_world_is_a_spec_error(world):
    (world / "d.world").mkdir()
    with pytest.raises(SpecError, match="is a folder"):
        load_spec(str(world / "d.world"))
    r = CliRunner().invoke(main, ["manual", str(world / "d.world")])
    assert r.exit_code == 2 and "is a folder" in r.output and "Traceback" not in r.output
