"""Root cause first: a grade's failures grouped by where they start, the biggest group first.

A student whose `__mul__` is wrong fails some twenty tests through it, and twenty separate
failures, the first about `a - b`, hide the one thing to fix. So the judge gives every failed
test a `Cause`, and the feedback opens with the one most failures share:

    Start here: `Value.__mul__`'s backward (engine.py:61) — 26 tests fail through it

The rule, in three steps:
1. An error says where it starts. A file that does not load is the cause of every test it
   stopped; then a requirement of the course the code does not meet, even where the student's
   code ran into it (a missing operator, a read-only `grad`, a name the grader needs); else the
   innermost frame of the student's code in the traceback (a `_backward` closure is its
   operator's backward).
2. A wrong result has no traceback. A failed test whose program uses one operator alone is
   that operator's own test: it is grouped under that operator (its backward when a gradient
   was wrong).
3. Any other wrong result is grouped under the first operator, in the course's order, that it
   uses and that steps 1 and 2 found failing: fixing that one is the way to know whether the
   test fails for a reason of its own. Part 3's programs build their Values in the student's
   own network code, which adds and multiplies: they use `+` and `*`. A wrong result that uses
   no failing operator is a group of its own.

Groups go in dependency order: a file that does not load first (nothing in it ran), then the
group most tests fail through, then the course's order (`ORDER`), then the order the tests ran.
Each group shows its first test's message in full and names the others; a file that does not
load is one note (file, line, the code, a hint) with the tests it stopped named under it.

The groups are kept in results.json (`extra_data`), by test name, so that whoever reads a grade
back (the class command's feedback pages) shows the same groups in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .cause import Cause
from .results import GradedTest, Verdict

# The course's Value in dependency order: what most of it is built on first.
ORDER = [
    "Value",
    "Value.data",
    "Value.grad",
    "Value._prev",
    "Value._backward",
    *(f"Value.__{op}__" for op in ("add", "radd", "mul", "rmul", "pow", "neg", "sub", "rsub", "truediv", "rtruediv")),
    *(f"Value.{name}" for name in ("exp", "log", "tanh", "relu", "sigmoid", "backward")),
    "topological_order",
]
SYMBOLS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "square": "pow", "neg": "neg"}
OPERATOR_STEPS = ("apply", "chain", "error", "error_or_gradients")
NETWORK_STEPS = ("mlp", "loss", "train")  # the student's network code adds and multiplies Values
NETWORK_USES = ("Value.__add__", "Value.__mul__")
SHOWN_IN_FULL = 10  # groups whose first message the grade's text shows whole; the rest by name
KEY = "root_causes"  # results.json's extra_data key
UNLOADABLE_HINT = "Python reads a whole file before it runs any of it: fix the line named (or the one above it)"


def of_function(function: str, file: str | None, line: int | None) -> Cause:
    """The cause in a student frame: `Value.__mul__.<locals>._backward` is `Value.__mul__`'s
    backward, a generator or lambda inside `hinge_loss` is `hinge_loss`, module code its file."""
    outer, _, inner = function.partition(".<locals>.")
    if outer == "<module>":
        return Cause(file or "your code", " at import", file, line)
    return Cause(outer, "'s backward" if inner == "_backward" else "", file, line)


def of_wrong_result(steps: list, gradient: bool) -> Cause:
    """A wrong result's cause: its operator when the program uses one alone (step 2), else what
    it uses, for step 3."""
    uses = tuple(dict.fromkeys(operators(steps)))
    if len(uses) == 1:
        return Cause(uses[0], "'s backward" if gradient else "", uses=uses)
    return Cause(uses=uses)


def operators(steps: object) -> Iterable[str]:
    """The Value functions a program's steps call, in order, nested bodies included; `x * b`
    with a plain number x calls `__rmul__` (and through it, as the course writes it, `__mul__`)."""
    if not isinstance(steps, list):
        return
    if len(steps) == 2 and isinstance(steps[0], str) and isinstance(steps[1], dict):
        name, arguments = steps
        if name in NETWORK_STEPS:
            yield from NETWORK_USES
        op = arguments.get("op")
        if name in OPERATOR_STEPS and isinstance(op, str):
            method = SYMBOLS.get(op)
            operands = arguments.get("operands") or [None]
            if method and isinstance(operands[0], (int, float)) and not isinstance(operands[0], bool):
                yield f"Value.__r{method}__"
            yield f"Value.__{method}__" if method else f"Value.{op}"
        for value in arguments.values():
            yield from operators(value)
        return
    for item in steps:
        yield from operators(item)


@dataclass
class Group:
    """Failed tests that start at one cause, in the order they ran."""

    title: str
    tests: list[str] = field(default_factory=list)
    note: list[str] = field(default_factory=list)  # a file that does not load: its line, code and hint

    def saved(self) -> dict:
        return {"title": self.title, "tests": self.tests, "note": self.note}


def group(records: Sequence[Verdict], locations: dict[str, list] | None = None) -> list[Group]:
    """The failed graded tests (bonus tests are not mistakes) in groups, by the rule above."""
    failed = [r for r in records if not r.passed and not r.bonus]
    causes = {id(r): r.cause or Cause(r.name) for r in failed}
    by_name: dict[str, tuple[Cause, list[Verdict]]] = {}
    for record in failed:  # steps 1 and 2
        cause = causes[id(record)]
        if cause.name:
            by_name.setdefault(cause.name, (cause, []))[1].append(record)
    for record in failed:  # step 3
        cause = causes[id(record)]
        if not cause.name:
            through = next((name for name in sorted(cause.uses, key=_rank) if name in by_name), None)
            by_name.setdefault(through or record.name, (Cause(record.name) if not through else cause, []))
            by_name[through or record.name][1].append(record)
    position = {id(r): i for i, r in enumerate(failed)}
    ordered = sorted(
        by_name.items(),
        key=lambda item: (item[1][0].loads, -len(item[1][1]), _rank(item[0]), position[id(item[1][1][0])]),
    )
    groups = []
    for _, (cause, members) in ordered:
        members.sort(key=lambda r: position[id(r)])
        title = cause.title(locations) if cause.name != members[0].name else members[0].name
        note = [] if cause.loads else [*cause.detail.splitlines(), f"hint: {UNLOADABLE_HINT}"]
        groups.append(Group(title, [r.name for r in members], note))
    return groups


def _rank(name: str) -> int:
    return ORDER.index(name) if name in ORDER else len(ORDER)


def saved(groups: list[Group]) -> list[dict]:
    return [g.saved() for g in groups]


def read(extra: dict) -> list[Group]:
    """The groups a results.json keeps (none in one from before they were kept)."""
    return [Group(g["title"], list(g["tests"]), list(g.get("note", []))) for g in extra.get(KEY, [])]


def start(groups: list[Group]) -> str:
    """The first line of the feedback."""
    first = groups[0]
    count = len(first.tests)
    if first.note:
        return f"Start here: {first.title} — {_tests(count)} could not run"
    return f"Start here: {first.title} — {_tests(count)} {'fails' if count == 1 else 'fail'} through it"


def lines(groups: list[Group], tests: Iterable[GradedTest]) -> list[str]:
    """The feedback as text: the start line, then each group with its first test's message in
    full (for the first SHOWN_IN_FULL groups) and the others by name."""
    if not groups:
        return []
    found = {test.name: test for test in tests}
    said = [start(groups)]
    for number, g in enumerate(groups, start=1):
        lost = sum(found[name].max_score - found[name].score for name in g.tests if name in found)
        points = f"{round(lost, 6):g} point{'' if lost == 1 else 's'}"
        said += ["", f"{number}. {g.title} — {_tests(len(g.tests))}, -{points}"]
        said += [f"    {line}" for line in g.note]
        rest = g.tests if g.note else g.tests[1:]
        if not g.note:
            message = found[g.tests[0]].output if g.tests[0] in found and number <= SHOWN_IN_FULL else ""
            said += [f"  {g.tests[0]}", *(f"    {line}" for line in message.splitlines())]
        if rest:
            said.append(f"  {'the tests it stopped' if g.note else 'also failing through it'}: {', '.join(rest)}")
    return said


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"
