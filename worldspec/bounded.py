"""Reading outside bytes (a file named on the command line, standard input) with a size cap.

A brief, a reference doc, a data file to import or a program on standard input may be a
stranger's, or /dev/zero, or an endless pipe: read whole, it costs memory without bound before
any check can refuse it. `read_capped` and `read_stream` read at most `limit + 1` bytes and
refuse a longer input with `TooLarge` (a ValueError naming what was read and its limit), so the
memory a reader spends is bounded before it is allocated.
"""
from __future__ import annotations

import os
from typing import BinaryIO

CHUNK = 1 << 20


class TooLarge(ValueError):
    """An input longer than its reader's cap."""


def read_stream(stream: BinaryIO, limit: int, what: str) -> bytes:
    """At most `limit` bytes of a binary stream; TooLarge when it holds more."""
    parts, size = [], 0
    while size <= limit:
        chunk = stream.read(min(CHUNK, limit + 1 - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    if size > limit:
        raise TooLarge(f"{what} is larger than {limit:,} bytes")
    return b"".join(parts)


def read_capped(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """At most `limit` bytes of the file at path (a regular file's size is checked before reading);
    TooLarge when it holds more, OSError when it cannot be read."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size > limit:
            raise TooLarge(f"{what} is larger than {limit:,} bytes ({st.st_size:,} bytes)")
        return read_stream(f, limit, what)


def read_capped_text(path: str | os.PathLike, limit: int, what: str) -> str:
    """read_capped as UTF-8 text (UnicodeDecodeError when it is not)."""
    return read_capped(path, limit, what).decode("utf-8")
