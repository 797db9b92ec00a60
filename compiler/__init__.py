"""spec AST -> executable World (interpreter, verifier, manual, rule inventory, coverage)."""
from worldspec.compiler.api import (Budget, Example, Feedback, InputError, Kind, Rule, Task, ToolSpec, Verdict,
                                    World)
from worldspec.compiler.build import KINDS, compile_spec, load_world, register_kind, resolve_world_path

__all__ = ["Budget", "Example", "Feedback", "InputError", "KINDS", "Kind", "Rule", "Task", "ToolSpec", "Verdict",
           "World", "compile_spec", "load_world", "register_kind", "resolve_world_path"]
