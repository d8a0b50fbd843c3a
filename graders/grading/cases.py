"""Grading cases: programs (plain data) plus what a student is told when one fails.

A `Case` is one graded test: one or more `Program`s, smallest first. The parent runs each
program on the reference and on the submission and compares every read; the first failing
program is the one shown, as a readable expression with its inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Program:
    """The steps of one program, `[name, {argument: value}]` each (the vocabulary is
    graders/child/steps.py's), and what a student is shown of it."""

    steps: list = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # one per read, e.g. "gradient of a"
    inputs: dict[str, object] = field(default_factory=dict)
    shown: str = ""  # e.g. "((a * b) + a).tanh()"
    hint: str = ""  # when this program alone needs its own hint (else the case's)
    count: int = 0

    def slot(self, prefix: str = "n") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def add(self, name: str, /, **arguments: object) -> None:
        """Append the step `name` with its named arguments (a step may have an argument
        called `name` too: this one is positional only)."""
        self.steps.append([name, arguments])

    def value(self, x: float, name: str | None = None) -> str:
        name = name or self.slot("v")
        self.add("value", into=name, x=x)
        self.inputs.setdefault(name, x)
        return name

    def apply(self, op: str, *operands: object) -> str:
        """A new slot holding `op` applied to the operands (slot names or numbers)."""
        out = self.slot()
        self.add("apply", into=out, op=op, operands=list(operands))
        return out

    def read(self, kind: str, ref: str, label: str) -> None:
        self.add("read", kind=kind, ref=ref)
        self.labels.append(label)


Check = Callable[[list, list], str | None]  # (got, want) -> None if fine, else what went wrong


def measured(steps: list) -> dict | None:
    """The arguments of a program's `measured` step, when it starts with one, else None.

    Such a program is timed by the parent, never by the child (whose clock and timers are the
    submission's to tamper with): it runs alone, in a fresh child, and the CPU that whole child
    used, imports and forks included, must stay within `limit` seconds. Every `stop_after` wall
    seconds the parent looks: a child past its limit is stopped, one within it runs on (a loaded
    machine slowed it). `what` names what is timed, for the student ("fit()")."""
    first = steps[0] if steps else None
    return first[1] if isinstance(first, list) and first[0] == "measured" else None


@dataclass
class Case:
    id: str
    part: str
    what: str  # the operation checked, in words
    hint: str
    programs: list[Program]
    points: float = 1.0
    secret: bool = False  # never show inputs or expected values
    rtol: float = 1e-6
    atol: float = 1e-9
    check: Check | None = None  # replaces the comparison with the reference, where orders may differ
    bonus: bool = False  # an optional extension: its points add to the score, never to the maximum


MAKER = "_minigrad_case_maker"


def cases(make: Callable[..., list[Case]]):
    """Mark a test with the function that builds its cases from a seeded `random.Random`.

    The number of cases never depends on the seed, so a part's total points are fixed.
    """

    def mark(test):
        setattr(test, MAKER, make)
        return test

    return mark
