"""Reading .world files safely: regular files only, includes inside the world's folder, size-capped, UTF-8.

A spec may come from a stranger. Its includes must not reach files outside the
folder tree of the world being loaded (diagnostics quote source lines, so a
file read is a file shown), must not hang on a FIFO or stream a device, and
must not cost more memory than a spec can need.
"""
from __future__ import annotations

import os
import stat

from worldspec.ast import Span
from worldspec.diagnostics import SpecError

MAX_SOURCE_BYTES = 2_000_000  # a spec with everything it includes; AlienCode is 73 kB


def folder_of(file: str) -> str:
    """The folder tree a world's includes must stay in: the real folder of its top-level file."""
    return os.path.realpath(os.path.dirname(os.path.abspath(file)))


def is_inside(root: str, path: str) -> bool:
    """Whether path, with every symlink and `..` resolved, lies in the folder tree root."""
    real = os.path.realpath(path)
    return os.path.commonpath([root, real]) == root


def read_source(path: str, at: Span, name: str, hint: str = "", limit: int = MAX_SOURCE_BYTES) -> str:
    """The UTF-8 text of the regular file at path, at most limit bytes; a SpecError located at `at` otherwise.

    `name` is how the message names the file (the author's own spelling), `hint`
    what to do when it cannot be opened. The file type is checked before opening,
    and the opened file again (it may have been swapped meanwhile), so a FIFO or
    a device is never read.
    """
    try:
        before = os.stat(path)
    except OSError as e:
        raise SpecError(at, f"cannot read {name}: {e.strerror}", hint) from None
    _check_regular(before, at, name, limit)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise SpecError(at, f"cannot read {name}: {e.strerror}", hint) from None
    with os.fdopen(fd, "rb") as f:
        after = os.fstat(f.fileno())
        _check_regular(after, at, name, limit)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            raise SpecError(at, f"{name} changed while it was being read", "Try again.")
        data = f.read(limit + 1)
    if data and not after.st_size:
        # a kernel's file (/proc/self/environ, /sys/...) says it is regular and empty, then reads as
        # text: it is the machine's, never a spec, and its first line must not be quoted back
        raise SpecError(at, f"{name} is not a regular file (a system file)",
                        "A world and its includes are ordinary .world files.")
    if len(data) > limit:
        raise SpecError(at, f"{name} is larger than {limit:,} bytes", "A .world file is a few hundred kB at most.")
    return decode(data, path)


def _check_regular(st: os.stat_result, at: Span, name: str, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise SpecError(at, f"{name} is {what}", "A world and its includes are ordinary .world files.")
    if st.st_size > limit:
        raise SpecError(at, f"{name} is larger than {limit:,} bytes", "A .world file is a few hundred kB at most.")


def decode(data: bytes, path: str) -> str:
    """The bytes as UTF-8 text; a SpecError at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        line_start = data.rfind(b"\n", 0, e.start) + 1
        col = len(data[line_start:e.start].decode("utf-8", "replace")) + 1
        raise SpecError(Span(path, line, col), f"the file is not UTF-8 text (byte 0x{data[e.start]:02x})",
                        "Save the spec as UTF-8.") from None
