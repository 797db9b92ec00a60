"""What a black-box agent sees, as one object: the explorer is built from this and nothing else.

`box_view(world)` copies the public face of a box: its manual, the input domains the manual shows, each test's
question (with the input it asks about, which the question shows), the turn@shot budget. It copies no hidden
member: no f, no targets, no expected answers, no rules. `BoxView.members()` names exactly what it holds, and
tests/test_box_explorer.py asserts that set, so the explorer cannot reach anything else.
"""
from __future__ import annotations

import attrs


@attrs.frozen
class TestView:
    """One test as its question shows it: the id, the question's text, its shape and the input it names
    (`values`: the test's query values, () for a puzzle's target or a game)."""

    id: str
    prompt: str
    shape: str
    values: tuple = ()


@attrs.frozen
class BoxView:
    """A box's public face (see the module docstring)."""

    name: str
    family: str
    difficulty: str
    manual: str
    inputs: tuple  # ((name, declared domain), ...): the domains the manual describes
    answer_domain: object  # a puzzle's declared answer domain, or None
    turns: int
    shots: int
    tests: tuple[TestView, ...]
    seed: int = 0  # the explorer's own seed (its random choices), not the box's

    @staticmethod
    def members() -> frozenset[str]:
        """The names a view holds: the whole of what the explorer may read."""
        return frozenset(a.name for a in attrs.fields(BoxView))

    def test(self, test_id: str) -> TestView:
        """The test with this id."""
        for t in self.tests:
            if t.id == test_id:
                return t
        raise KeyError(test_id)


def shown_values(world, task) -> tuple:
    """The input a test's question names (the question prints it; a puzzle's, a game's or a program's names none)."""
    if getattr(world, "has_goal", False) or task.shape in ("play", "program"):
        return ()
    case = world.test_of(task.id)
    return tuple(getattr(case, "values", ()) or ())


def box_view(world, turns: int | None = None, shots: int | None = None, seed: int = 0) -> BoxView:
    """The view of one box (turn@shot: this run's, or the box's own budget)."""
    tests = tuple(TestView(t.id, t.prompt, t.shape, shown_values(world, t)) for t in world.tasks)
    return BoxView(name=world.name, family=world.family, difficulty=world.difficulty, manual=world.manual,
                   inputs=tuple(getattr(world, "inputs", ())), answer_domain=getattr(world, "answer_domain", None),
                   turns=turns or world.budget.turns, shots=shots or world.budget.shots, tests=tests, seed=seed)


def plain_domain(domain):
    """The structured option of a domain that also takes free text (`either(message, list(...))`): the one the
    manual's example uses; the domain itself otherwise."""
    options = getattr(domain, "options", None)
    if type(domain).__name__ == "EitherDomain" and options:
        typed = [d for d in options if getattr(d, "label", "") != "message"]
        return typed[-1] if typed else options[0]
    return domain
