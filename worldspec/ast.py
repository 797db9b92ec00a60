"""The spec AST: frozen attrs records, each carrying the Span it came from."""
from __future__ import annotations

import attrs


@attrs.frozen
class Span:
    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


NOSPAN = Span("<none>", 0, 0)


# ---------------------------------------------------------------- meta-language


@attrs.frozen
class Expr:
    span: Span = attrs.field(default=NOSPAN, kw_only=True, eq=False)


@attrs.frozen
class Const(Expr):
    value: object


@attrs.frozen
class ListExpr(Expr):
    items: tuple[Expr, ...]


@attrs.frozen
class MapExpr(Expr):
    pairs: tuple[tuple[Expr, Expr], ...]


@attrs.frozen
class Var(Expr):
    name: str


@attrs.frozen
class Call(Expr):
    fn: Expr
    args: tuple[Expr, ...]


@attrs.frozen
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr


@attrs.frozen
class Neg(Expr):
    operand: Expr


@attrs.frozen
class Not(Expr):
    operand: Expr


@attrs.frozen
class And(Expr):
    left: Expr
    right: Expr


@attrs.frozen
class Or(Expr):
    left: Expr
    right: Expr


@attrs.frozen
class If(Expr):
    cond: Expr
    then: Expr
    orelse: Expr


@attrs.frozen
class Let(Expr):
    name: str
    value: Expr
    body: Expr


@attrs.frozen
class Lambda(Expr):
    params: tuple[str, ...]
    body: Expr


# ---------------------------------------------------------------- spec


@attrs.frozen
class Type:
    name: str
    arg: "Type | None" = None

    def __str__(self) -> str:
        return self.name if self.arg is None else f"{self.name}[{self.arg}]"


ANY = Type("any")


@attrs.frozen
class Param:
    name: str
    type: Type = ANY
    variadic: bool = False
    default: "Expr | None" = None  # an optional parameter's value when a call leaves it out
    lazy: bool = False  # evaluated only when the body reads it (operators called from programs)


@attrs.frozen
class ParamDecl:
    """`param K = pick(1..63) default 27` (kind: range | list | const)."""

    name: str
    kind: str
    args: tuple[Expr, ...]
    default: Expr | None
    span: Span = attrs.field(eq=False)


@attrs.frozen
class Def:
    name: str
    params: tuple[str, ...]
    body: Expr
    span: Span = attrs.field(eq=False)
    defaults: tuple[Expr, ...] = ()  # the values of the last len(defaults) parameters when left out


@attrs.frozen
class SyntaxEntry:
    key: str
    value: str
    span: Span = attrs.field(eq=False)


@attrs.frozen
class Definition:
    """One op or hook: a base line (with doc) or a rule's override (doc empty)."""

    kind: str  # "op" | "hook"
    name: str
    params: tuple[Param, ...]
    returns: Type
    body: Expr
    doc: str
    span: Span = attrs.field(eq=False)
    mutates: str = ""  # base operators: the parameter whose variable a bare-statement call updates
    # `mutates xs to EXPR`: every call with a variable as xs sets it to EXPR and gives the body's value (pop)
    updates: Expr | None = None

    @property
    def target(self) -> str:
        return f"{self.kind} {self.name}"


@attrs.frozen
class Keyed:
    """What a kind-specific line starts with: its key word, its arguments and where it stands."""

    key: str
    args: tuple[Expr, ...]
    span: Span = attrs.field(eq=False)


@attrs.frozen
class Field(Keyed):
    """A kind-specific field: `goal "A & B"`, `move if x then 1 else 0`, ..."""


@attrs.frozen
class GenericItem(Keyed):
    """A kind-specific top-level item (`KEY args`) or block (`KEY NAME ["note"] { fields }`)."""

    name: str = ""
    note: str = ""
    fields: tuple[Field, ...] = ()


@attrs.frozen(kw_only=True)
class Declared:
    """What a declared block (`rule`, `example`) has whatever it declares: its id, where it
    stands, and the kind-specific fields a kind reads from it."""

    id: str  # carried to the compiled world and the report ("R14", "E3")
    span: Span = attrs.field(eq=False)
    fields: tuple[Field, ...] = ()


@attrs.frozen(kw_only=True)
class RuleDecl(Declared):
    """`rule R14 "title" { ... }`: one perturbed rule, the hidden truth the manual leaves out."""

    title: str
    override: Definition | None  # program worlds; other kinds use fields
    statement: str  # the rule in words, for grading a rule report
    equation: str  # the rule as an equation a rule report may state instead
    equation_span: Span = attrs.field(eq=False, default=NOSPAN)
    syntax: SyntaxEntry | None = None  # program worlds: `syntax infix "..."`, an operator entry it replaces


@attrs.frozen
class HerringDecl:
    """`herring H1 TARGET "note"`: something that looks perturbed and is not."""

    id: str
    target: str  # operator or hook name
    note: str
    span: Span = attrs.field(eq=False)


@attrs.frozen(kw_only=True)
class ExampleDecl(Declared):
    """`example E1 { ... }`: a worked example shown before exploration, with its reference program."""

    labels: tuple[tuple[str, str], ...]  # (key, value) labels such as the task band
    prompt: str
    program: str  # run in the true world to show its output
    program_span: Span = attrs.field(eq=False, default=NOSPAN)


@attrs.frozen
class Input:
    name: str
    type: Type


@attrs.frozen
class TaskDecl:
    id: str
    labels: tuple[tuple[str, str], ...]
    prompt: str
    inputs: tuple[Input, ...]
    cases: tuple[tuple[Expr, ...], ...]
    expect: Expr | None
    solution: str
    naive: str
    function: str  # "" unless the task is function-shaped
    predict: bool
    program: str  # predict tasks: the program whose output is the answer
    tolerance: float
    span: Span = attrs.field(eq=False)
    field_spans: tuple[tuple[str, Span], ...] = attrs.field(eq=False, default=())
    extra: tuple[Field, ...] = ()  # kind-specific fields
    solutions: tuple[str, ...] = ()  # every `solution` line in order (`solution` is the first)

    def field_span(self, name: str) -> Span:
        return dict(self.field_spans).get(name, self.span)


@attrs.frozen
class Spec:
    """A whole .world file (after includes are merged)."""

    file: str
    name: str
    version: int
    kind: str
    seed: int
    summary: str
    params: tuple[ParamDecl, ...]
    defs: tuple[Def, ...]
    syntax: tuple[SyntaxEntry, ...]
    base: tuple[Definition, ...]
    rules: tuple[RuleDecl, ...]
    herrings: tuple[HerringDecl, ...]
    manual: str
    examples: tuple[ExampleDecl, ...]
    tasks: tuple[TaskDecl, ...]
    budget: tuple[tuple[str, int], ...]
    unit_costs: tuple[tuple[str, int], ...]
    span: Span = attrs.field(eq=False)
    generic: tuple[GenericItem, ...] = ()  # kind-specific items and blocks
    budget_spans: tuple[tuple[str, Span], ...] = attrs.field(eq=False, default=())
    kind_span: Span = attrs.field(eq=False, default=NOSPAN)
    language: int = 2  # the edition the world is written in (its `language` line; 2 without one)
    warnings: tuple = attrs.field(eq=False, repr=False, default=())  # SpecWarnings the parser found (older editions' leniency)


def mentions(e, name: str) -> bool:
    """Whether an expression names `name` anywhere (a conservative syntactic test)."""
    todo = [e]
    while todo:
        x = todo.pop()
        if isinstance(x, Var):
            if x.name == name:
                return True
        elif isinstance(x, Expr):
            todo += [getattr(x, f.name) for f in attrs.fields(type(x)) if f.name != "span"]
        elif isinstance(x, tuple):
            todo += list(x)
    return False
