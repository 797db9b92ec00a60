"""spec AST -> executable World (interpreter, verifier, manual, rule inventory, coverage)."""
from worldspec.compiler.build import compile_spec, load_world, resolve_world_path
from worldspec.compiler.model import Budget, Example, Feedback, Rule, Task, Verdict
from worldspec.compiler.world import ToolSpec, World

__all__ = ["Budget", "Example", "Feedback", "Rule", "Task", "ToolSpec", "Verdict", "World",
           "compile_spec", "load_world", "resolve_world_path"]
