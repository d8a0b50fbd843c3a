"""Root cause first: a grade's failures grouped by where they start, the biggest group first.

A student whose `__mul__` is wrong fails some twenty tests through it, and twenty separate
failures, the first about `a - b`, hide the one thing to fix. So the judge gives every failed
test a `Cause`, and the feedback opens with the one most failures share:

    Start here: `Value.__mul__`'s backward (engine.py:61) — 26 tests fail through it

The evidence: where an error was raised, the course functions each test's program uses (its
operators and the steps that call the student's `backward()`, `SGD.step`, `train`...), what
those functions were seen to run in turn (the API probes, graders/child/steps_api.py: `-`
written as `+` and negation runs both; a `train` runs `SGD.step`), and which tests pass.
The rule, in three steps:
1. An error says where it starts. A file that does not load is the cause of every test it
   stopped; then a requirement of the course the code does not meet, even where the student's
   code ran into it (a missing operator, a read-only `grad`, a `_backward` that takes
   arguments, a name the grader needs); a function the program hung in; else the innermost
   frame of the student's code in the traceback (a `_backward` closure is its operator's
   backward), unless that function passes every test of its own and fails none (a `**` that
   overflows on the numbers a wrong `SGD.step` made): then the error is weighed as a wrong
   result is, in step 3.
2. A wrong result has no traceback. A failed test whose program uses one function alone is
   that function's own test: it is grouped under that function (an operator's backward when
   a gradient was wrong). A program that calls `backward()` uses it too.
3. Any other wrong result is grouped under the first function, in the course's order, that it
   uses and that steps 1 and 2 found failing: fixing that one is the way to know whether the
   test fails for a reason of its own. An operator built from others is used with its parts,
   so `a - b` is blamed where `+` or negation fails. Else it is grouped under the function it
   uses that failing tests use most and passing tests least (the Ochiai measure of
   spectrum-based fault localisation: failed / sqrt(failed + passed), the course's order
   breaking ties); a wrong result that uses no function is a group of its own.

Groups go in dependency order: a file that does not load first (nothing in it ran), then the
group most tests fail through, then the course's order (`ORDER`), then the order the tests ran.
A group lists the tests of its function alone first (`a * b` before `a - b` built from it), then
the others in the order they ran. Each group shows its first test's message in full and names
the others; a file that does not
load is one note (file, line, the code, a hint) with the tests it stopped named under it.

The groups are kept in results.json (`extra_data`), by test name, so that whoever reads a grade
back (the class command's feedback pages) shows the same groups in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from .cause import Cause
from .results import GradedTest, Verdict

# The course's functions in dependency order: what most of it is built on first.
ORDER = [
    "Value",
    "Value.data",
    "Value.grad",
    "Value._prev",
    "Value._backward",
    *(f"Value.__{op}__" for op in ("add", "radd", "mul", "rmul", "pow", "neg", "sub", "rsub", "truediv", "rtruediv")),
    *(f"Value.{name}" for name in ("exp", "log", "tanh", "relu", "sigmoid", "backward")),
    "topological_order",
    "zero_grad",
    "numerical_grad",
    "MLP",
    "MLP.__call__",
    "MLP.parameters",
    "mse_loss",
    "hinge_loss",
    "binary_cross_entropy",
    "SGD.step",
    "train",
]
OPERATORS = ORDER[ORDER.index("Value.__add__") : ORDER.index("Value.backward")]  # each with a backward
SYMBOLS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "square": "pow", "neg": "neg"}
OPERATOR_STEPS = ("apply", "chain", "error", "error_or_gradients")
NETWORK_STEPS = ("mlp", "loss", "train")  # the student's network code adds and multiplies Values
NETWORK_USES = ("Value.__add__", "Value.__mul__")
STEP_USES = {  # the course functions of the student's that a step calls (graders/child/steps_scalar.py)
    "backward": ("Value.backward",),
    "topo": ("topological_order",),
    "zero_grad": ("zero_grad",),
    "numerical_grad": ("numerical_grad",),
    "mlp": ("MLP",),
    "call": ("MLP.__call__",),
    "set_params": ("MLP.parameters",),
    "sgd_step": ("MLP.parameters", "SGD.step"),
    "train": ("train",),
}
LOSSES = ("mse_loss", "hinge_loss", "binary_cross_entropy")
BACKWARD = "'s backward"
SIGNATURE = "'s backward takes arguments: the course calls `_backward()` with none"
SHOWN_IN_FULL = 10  # groups whose first message the grade's text shows whole; the rest by name
KEY = "root_causes"  # results.json's extra_data key
UNLOADABLE_HINT = "Python reads a whole file before it runs any of it: fix the line named (or the one above it)"


def of_function(function: str, file: str | None, line: int | None, steps: object = None) -> Cause:
    """The cause in a student frame: `Value.__mul__.<locals>._backward` is `Value.__mul__`'s
    backward, a generator or lambda inside `hinge_loss` is `hinge_loss`, module code its file;
    with the functions the program (`steps`) uses, for step 1's exception."""
    outer, _, inner = function.partition(".<locals>.")
    if outer == "<module>":
        return Cause(file or "your code", " at import", file, line)
    return Cause(outer, BACKWARD if inner == "_backward" else "", file, line, uses=tuple(dict.fromkeys(uses(steps))))


def of_wrong_result(steps: list, gradient: bool) -> Cause:
    """A wrong result's cause: no name yet, what the program uses (steps 2 and 3 place it
    among the grade's other failures)."""
    return Cause(said=BACKWARD if gradient else "", uses=tuple(dict.fromkeys(uses(steps))))


def uses(steps: object) -> Iterable[str]:
    """The course functions a program's steps call, in order, nested bodies included; `x * b`
    with a plain number x calls `__rmul__` (and through it, as the course writes it, `__mul__`)."""
    if not isinstance(steps, list):
        return
    if len(steps) == 2 and isinstance(steps[0], str) and isinstance(steps[1], dict):
        name, arguments = steps
        if name in NETWORK_STEPS:
            yield from NETWORK_USES
        yield from STEP_USES.get(name, ())
        yield from (
            arguments[key] for key in ("name", "loss") if name in NETWORK_STEPS and arguments.get(key) in LOSSES
        )
        op = arguments.get("op")
        if name in OPERATOR_STEPS and isinstance(op, str):
            method = SYMBOLS.get(op)
            operands = arguments.get("operands") or [None]
            if method and isinstance(operands[0], (int, float)) and not isinstance(operands[0], bool):
                yield f"Value.__r{method}__"
            yield f"Value.__{method}__" if method else f"Value.{op}"
        for value in arguments.values():
            yield from uses(value)
        return
    for item in steps:
        yield from uses(item)


UNATTACHED = " attaches no `_backward` to its result"


@dataclass
class Evidence:
    """What the API probes saw of the submission (graders/child/steps_api.py), as the parent
    reads it (graders/grading/notes.py): where each function is defined, what each was seen to
    run, and what the probe's own small graph shows of the gradients."""

    locations: dict[str, list] = field(default_factory=dict)  # "SGD.step": ["nn.py", 151]
    calls: dict[str, list[str]] = field(default_factory=dict)  # "Value.__sub__": ["Value.__neg__", ...]
    gradients: Cause | None = None  # every wrong gradient's cause: a flag that switches gradients off
    backward: str = ""  # what the student's backward() does wrong: " leaves the root's grad at 0.0..."
    unattached: tuple[str, ...] = ()  # operators whose result carries no `_backward` of theirs
    refusals: dict[str, list] = field(default_factory=dict)  # "Value.__add__": [error, function, file, line]


def through(cause: Cause, evidence: Evidence) -> Cause:
    """`cause` with what the probes saw added: the course functions its functions were seen to
    run join what it uses (`a - b` written as `a + (-b)` uses `+` and negation: an operator
    whose result carries a `_backward` of its own is the only one a wrong gradient of it can come
    from, so its parts are added for a wrong value only); a wrong result where the probe's graph
    shows why is placed there: a flag that switches gradients off (every wrong gradient, and
    every wrong result of a program that calls backward()), a backward() that never seeds the
    root or runs inputs first (every wrong result of a program that calls it), an operator that
    attaches no `_backward` (its own wrong gradient); a wrong error type where the probe saw
    which line raised it, at that line."""
    if not cause.uses:
        return cause
    more = list(cause.uses)
    for name in more:  # grows as it goes: what the parts run in turn
        if cause.said == BACKWARD and name in OPERATORS and f"{name}{BACKWARD}" in evidence.locations:
            continue
        more += [called for called in evidence.calls.get(name, ()) if called in ORDER and called not in more]
    found = replace(cause, uses=tuple(more))
    alone = cause.uses[0] if len(cause.uses) == 1 else None
    if cause.name:
        return found
    gradients = cause.said == BACKWARD or "Value.backward" in more  # wrong, or used by what is wrong
    if gradients and evidence.gradients:
        return replace(evidence.gradients, uses=found.uses)
    if evidence.backward and "Value.backward" in more:
        return replace(found, name="Value.backward", said=evidence.backward)
    if cause.said == BACKWARD and alone in evidence.unattached:
        return replace(found, name=alone, said=UNATTACHED)
    refused = evidence.refusals.get(alone or "")
    if refused and cause.detail == f"raised {refused[0]}":
        return replace(of_function(*refused[1:]), uses=found.uses)
    return found


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
    graded = [r for r in records if not r.bonus]
    failed = [r for r in graded if not r.passed]
    causes = {id(r): r.cause or Cause(r.name) for r in failed}
    counts = _counts(graded, causes)
    for record in failed:  # step 2, and step 1's exception
        cause = causes[id(record)]
        if not cause.name and len(cause.uses) == 1:
            causes[id(record)] = _named(cause, cause.uses[0])
        elif cause.name and _only_passes(cause.name, counts) and cause.loads and not cause.said:
            causes[id(record)] = Cause(uses=(*cause.uses, cause.name))
    by_key: dict[str, tuple[Cause, list[Verdict]]] = {}
    for record in failed:  # steps 1 and 2
        cause = causes[id(record)]
        if cause.name:
            by_key.setdefault(_key(cause.name, cause.said), (cause, []))[1].append(record)
    named = {cause.name: key for key, (cause, _) in reversed(by_key.items())}
    for record in failed:  # step 3
        cause = causes[id(record)]
        if cause.name:
            continue
        through = next((name for name in sorted(cause.uses, key=_rank) if name in named), None)
        if through is not None:
            key = _key(through, cause.said) if _key(through, cause.said) in by_key else named[through]
        elif suspect := _most_suspect(cause.uses, counts):
            cause = _named(cause, suspect)
            key = _key(cause.name, cause.said)
        else:
            cause, key = Cause(record.name), record.name
        by_key.setdefault(key, (cause, []))[1].append(record)
    position = {id(r): i for i, r in enumerate(failed)}
    ordered = sorted(
        by_key.items(),
        key=lambda item: (item[1][0].loads, -len(item[1][1]), _rank(item[1][0].name), position[id(item[1][1][0])]),
    )
    groups = []
    for _, (cause, members) in ordered:  # a function's own tests first: their message shows it alone
        members.sort(key=lambda r: (not _alone(r, cause.name), position[id(r)]))
        title = cause.title(locations) if cause.name != members[0].name else members[0].name
        note = [] if cause.loads else [*cause.detail.splitlines(), f"hint: {UNLOADABLE_HINT}"]
        groups.append(Group(title, [r.name for r in members], note))
    return groups


def _key(name: str, said: str) -> str:
    """A group: a function, or its backward (`+ "2"` failing in `__add__` is not its backward's
    fault); what else is said of it (the type `data` holds) does not split it."""
    return name + BACKWARD if said.startswith(BACKWARD) else name


def _alone(record: Verdict, name: str) -> bool:
    """Whether `record` is a test of the function `name` alone (a program that uses nothing else)."""
    return record.cause is not None and record.cause.uses[:1] == (name,) and len(set(record.cause.uses)) == 1


def _named(cause: Cause, name: str) -> Cause:
    """A wrong result's cause at `name`: an operator's backward for a wrong gradient."""
    return replace(cause, name=name, said=cause.said if name in OPERATORS else "")


def _counts(graded: Sequence[Verdict], causes: dict[int, Cause]) -> dict[str, list[int]]:
    """For each function: [failed tests that use it, passed tests that use it, failed tests
    that use it alone, passed tests that use it alone]."""
    counts: dict[str, list[int]] = {}
    for record in graded:
        cause = causes.get(id(record), record.cause) or Cause()
        for name in set(cause.uses) | ({cause.name} if cause.name else set()):
            counts.setdefault(name, [0, 0, 0, 0])[record.passed] += 1
        if len(cause.uses) == 1:
            counts.setdefault(cause.uses[0], [0, 0, 0, 0])[2 + record.passed] += 1
    return counts


def _only_passes(name: str, counts: dict[str, list[int]]) -> bool:
    """Whether `name` passes tests of its own (programs that use it alone) and fails none."""
    found = counts.get(name, [0, 0, 0, 0])
    return found[3] > 0 and found[2] == 0


def _most_suspect(names: Sequence[str], counts: dict[str, list[int]]) -> str | None:
    """The function failing tests use most and passing tests least (Ochiai's measure, whose
    other factor, the number of failed tests, is the same for every function here)."""
    known = [name for name in names if name in ORDER]
    if not known:
        return None
    return max(known, key=lambda name: (_ochiai(counts.get(name, [0, 0, 0, 0])), -_rank(name)))


def _ochiai(found: list[int]) -> float:
    failed, passed = found[0], found[1]
    return failed / math.sqrt(failed + passed) if failed else 0.0


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
