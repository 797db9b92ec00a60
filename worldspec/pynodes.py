"""Building blocks shared by the two compilers to Python `ast` (worldspec/meta_ast.py for the
meta-language, compiler/program/kernel_ast.py for world programs): nodes at line 1 and the table
of objects generated code reaches by name."""
from __future__ import annotations

import ast as py


def node(cls, *args):
    """A node at line 1 (generated code has no lines of its own: errors carry the spec's lines)."""
    return cls(*args, lineno=1, col_offset=0)


def load(ident: str) -> py.Name:
    """A name read."""
    return node(py.Name, ident, py.Load())


def store(ident: str) -> py.Name:
    """A name assigned."""
    return node(py.Name, ident, py.Store())


class ObjectTable:
    """The generated code's globals: each object entered once, under a table name `k<n>`.
    A compiler using it sets `self.table` (the globals dict) and `self.ids` (id -> name)."""

    table: dict
    ids: dict

    def ref(self, obj) -> str:
        """The table name of an object (entered once)."""
        key = id(obj)
        if key not in self.ids:
            self.ids[key] = name = f"k{len(self.ids)}"
            self.table[name] = obj
        return self.ids[key]
