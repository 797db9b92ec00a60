"""The on-disk cache of compiled-world artefacts (docs/cache.md): content-addressed, safe to delete.

One JSON file per (parsed world, seed, compiler), holding the records a kind computed while
compiling it (compiler/artefacts.py). The key is a SHA-256 of

- the parsed spec: the world file with everything it includes, as the compiler sees it (an
  edit to the world or to an included file changes it; a comment does not);
- the seed the world is compiled at;
- the compiler's fingerprint: worldspec's version, this cache's format and the bytes of every
  source file of the language and the compiler (worldspec/ and compiler/: the grammar, the
  meta-language, the kinds), so no record is trusted by another version, released or not.

Files live under `$WORLDSPEC_CACHE_DIR`, else `$XDG_CACHE_HOME/worldspec/worlds`, else
`~/.cache/worldspec/worlds`, one folder per compiler fingerprint (a folder of another fingerprint
untouched for PRUNE_DAYS is removed when a new one is made). A file that cannot be read, is cut
short, is not JSON, or names another format, version or key is ignored (and written afresh after
the compile); writes go to a temporary file in the same folder, then `os.replace`, so a reader
sees a whole file or none and concurrent writers cannot interleave. Any OSError is swallowed: the
cache only ever saves time. `WORLDSPEC_NO_CACHE=1` (or `--no-cache` on the commands that compile
worlds, which sets it for their worker processes too) bypasses it, reading and writing nothing.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
import weakref
from importlib import metadata

import worldspec
from worldspec import ast
from worldspec.bounded import TooLarge, read_capped
from worldspec.safejson import loads

FORMAT = 1  # the layout of a cache file and its records; bump when either changes meaning
ENV_DIR = "WORLDSPEC_CACHE_DIR"
ENV_DISABLE = "WORLDSPEC_NO_CACHE"
MAX_FILE_BYTES = 64_000_000  # larger than any world's records; a bigger file is not ours
MAX_JSON_DEPTH = 4 * 100 + 20  # a record of a value nested MAX_NEST deep, tags included
PRUNE_DAYS = 7
SOURCE_SUFFIXES = (".py", ".lark", ".spec", ".families")
_FOLDER = re.compile(r"^[0-9a-f]{16}$")
# libraries whose behaviour a compiled world or its certification depends on (the grammar's parser, the
# Hold'em engine): another version of one is another compiler
LIBRARIES = ("lark", "pokerkit")
_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # world -> the key load_world compiled it under


def disabled() -> bool:
    """Whether the environment asks for no cache (WORLDSPEC_NO_CACHE set to anything but 0 or empty)."""
    return os.environ.get(ENV_DISABLE, "").strip() not in ("", "0")


def disable_for_this_process_and_children() -> None:
    """`--no-cache`: set WORLDSPEC_NO_CACHE, which worker processes started later inherit."""
    os.environ[ENV_DISABLE] = "1"


def cache_root() -> str:
    """Where the cache's folders are: WORLDSPEC_CACHE_DIR, else the XDG user cache dir's worldspec/worlds."""
    explicit = os.environ.get(ENV_DIR, "").strip()
    if explicit:
        return os.path.abspath(explicit)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if not base or not os.path.isabs(base):  # the XDG spec: a relative value is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "worldspec", "worlds")


def _package_dirs() -> list[str]:
    """The folders whose source makes up the language and the compiler (not the runner, not the worlds)."""
    return [os.path.dirname(os.path.abspath(worldspec.__file__)),  # worldspec/
            os.path.dirname(os.path.abspath(__file__))]  # compiler/, where this module is


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 over worldspec's version, FORMAT and every source file of worldspec/ and compiler/ (once per
    process: about 5 ms)."""
    h = hashlib.sha256(f"worldspec {worldspec.__version__} cache format {FORMAT} python {sys.version}\n".encode())
    for lib in LIBRARIES:
        try:
            h.update(f"{lib} {metadata.version(lib)}\n".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{lib} absent\n".encode())
    skip = set()
    for name in ("worldspec.runner", "worldspec.worlds"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for loc in (spec.submodule_search_locations or []) if spec is not None else []:
            skip.add(os.path.realpath(loc))
    seen: set[str] = set()
    for root in _package_dirs():
        for folder, dirs, names in os.walk(root):
            real = os.path.realpath(folder)
            if real in seen or real in skip:
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(names):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(folder, name)
                    try:
                        with open(path, "rb") as f:
                            data = f.read()
                    except OSError:
                        data = b"<unreadable>"
                    h.update(f"{os.path.relpath(path, root)}\0{len(data)}\0".encode("utf-8", "surrogatepass"))
                    h.update(data)
    return h.hexdigest()


def world_key(spec: ast.Spec, seed: int) -> str:
    """The content address of a world's artefacts: its parsed spec (world file and includes), seed, compiler."""
    h = hashlib.sha256(f"{code_fingerprint()}\nseed {seed}\n".encode())
    # The Spec AST is frozen attrs records of strings, numbers and tuples all the way down, every field
    # in its repr (spans too, so a file's path is part of the key): its repr is the parsed content.
    h.update(repr(spec).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def remember(world, key: str) -> None:
    """Note the key a world was compiled under (its later artefacts, a certification, are stored with it)."""
    try:
        _KEYS[world] = key
    except TypeError:  # a world object that cannot be weakly referenced: nothing is remembered
        pass


def key_of(world) -> str | None:
    """The key `load_world` compiled this world under (None: compiled some other way, or without the cache)."""
    try:
        return _KEYS.get(world)
    except TypeError:
        return None


def folder() -> str:
    """This compiler's folder in the cache."""
    return os.path.join(cache_root(), code_fingerprint()[:16])


def path_of(key: str) -> str:
    """The cache file of a key."""
    return os.path.join(folder(), f"{key}.json")


def read(key: str) -> dict:
    """The records stored under `key`; {} when there is no file or it is not a whole, valid one of ours.

    A file is two lines: a header (format, worldspec's version, the compiler's fingerprint, the key, the
    SHA-256 of the second line) and the records, both JSON. A file cut short, altered, or written by
    another version fails one of the checks and reads as empty."""
    try:
        data = read_capped(path_of(key), MAX_FILE_BYTES, "cache file")
    except (OSError, TooLarge):
        return {}
    head, sep, body = data.partition(b"\n")
    try:
        doc = loads(head, max_depth=4)
        if (not sep or type(doc) is not dict or doc.get("format") != FORMAT
                or doc.get("worldspec") != worldspec.__version__ or doc.get("compiler") != code_fingerprint()
                or doc.get("key") != key or doc.get("sha256") != hashlib.sha256(body).hexdigest()):
            return {}
        records = loads(body, max_depth=MAX_JSON_DEPTH)
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep
        return {}
    return records if type(records) is dict else {}


def write(key: str, records: dict) -> bool:
    """Store the records under `key` atomically (temporary file, then os.replace); False if it could not."""
    try:
        body = json.dumps(records, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
    except (ValueError, TypeError, RecursionError):
        return False
    if len(body) > MAX_FILE_BYTES - 4096:
        return False
    head = json.dumps({"format": FORMAT, "worldspec": worldspec.__version__, "compiler": code_fingerprint(),
                       "key": key, "written": int(time.time()), "sha256": hashlib.sha256(body).hexdigest()})
    target = folder()
    tmp = None
    try:
        fresh = not os.path.isdir(target)
        os.makedirs(target, exist_ok=True)
        if fresh:
            prune(os.path.dirname(target), os.path.basename(target))
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}.", suffix=".tmp", dir=target)
        with os.fdopen(fd, "wb") as f:
            f.write(head.encode("ascii") + b"\n" + body)
        os.replace(tmp, path_of(key))
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


def prune(root: str, keep: str, days: float = PRUNE_DAYS) -> None:
    """Remove other compilers' folders under root not modified for `days` (only folders named as ours)."""
    cutoff = time.time() - days * 86400
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for e in entries:
        try:
            if e.name != keep and _FOLDER.match(e.name) and e.is_dir(follow_symlinks=False) \
                    and e.stat(follow_symlinks=False).st_mtime < cutoff:
                shutil.rmtree(e.path, ignore_errors=True)
        except OSError:
            pass
