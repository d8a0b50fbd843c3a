"""Compare a submission's outcome with the reference's and explain any difference in words."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import replace

from graders.course_facts.kit import COURSE_API, shared_module
from graders.reporting.cause import Cause
from graders.reporting.escape import untrusted
from graders.reporting.root_cause import SIGNATURE, UNLOADABLE_HINT, of_function, of_wrong_result

from . import hang_report, notes
from .cases import Case, Program, measured
from .comparison import close, is_array
from .protocol import TEXT_LIMIT, Outcome

course_api = shared_module("minigrad_course_api", COURSE_API)
UNLOADABLE = ("SyntaxError", "IndentationError", "TabError")  # the student's file, though no frame of it ran

SCALAR_PARTS = ("value", "backward", "mlp")  # whose answers are a Value's numbers
ARRAY_SHOWN = 12  # elements up to which a failure shows an array answer whole


class GradeFailure(AssertionError):
    """A graded test the submission failed; the message is what the student reads, and the
    cause is where its trouble starts (root_cause.py groups the failures by it)."""

    def __init__(self, message: str, cause: Cause | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class GraderError(RuntimeError):
    """The reference itself failed a program: a bug in the suite, never the student's fault."""


def _inputs(case: Case, program: Program) -> str:
    if case.secret:
        return "(hidden)"
    return ", ".join(f"{k} = {v!r}" for k, v in program.inputs.items()) or "(none)"


def plain(got: object) -> str:
    """What the child sent, as the student reads it: a Value where a number belongs is "a Value
    object", not the channel's `{'not_a_number': 'Value'}`; trimmed, however large it was."""
    text = _words(got)
    if _has_non_number(got):
        text += ", expected a number" if isinstance(got, dict) else ", expected numbers"
    return _trimmed(text)


def _trimmed(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + " ..."


def _words(got: object) -> str:
    if isinstance(got, list):
        return "[" + ", ".join(_words(g) for g in got) + "]"
    if isinstance(got, dict) and set(got) == {"not_a_number"}:
        return f"a {untrusted(got['not_a_number'])} object"
    if isinstance(got, dict) and set(got) == {"not_finite"}:
        return f"{untrusted(got['not_finite'])} (not a finite number)"
    return repr(got)


def _has_non_number(got: object) -> bool:
    return _non_number(got) is not None


def _where(error: dict) -> str:
    return f" in {error['where']}" if error.get("where") else ""


def explain_error(case: Case, program: Program, error: dict) -> str:
    error = {key: value if value is None else untrusted(value) for key, value in error.items()}
    if case.bonus and error["type"] == notes.NEEDS:  # an optional extension, left out: nothing to fix
        return f"{case.what}: not attempted yet: `{error['message']}` is missing (optional: it only adds points)"
    if said_once := notes.per_test(error):
        return f"{case.what}: {said_once}"
    if name := notes.called_but_missing(error):
        return (
            f"{case.what}: your code{_where(error)} calls `{name}`, {notes.DESCRIPTIONS[name]}, which is missing\n"
            f"    while running: {program.shown}\n"
            f"    hint:     write `{name}` first: its own test tells you more"
        )
    if error["type"] == "NotImplementedError" and error.get("where"):
        return f"{case.what}: not attempted yet: `{error['where'].split(' (')[0]}`"
    if error["type"] in ("ChildFailure", "Skipped"):
        return f"{case.what}: {error['message']}\n    while running: {program.shown}"
    if error["type"] in UNLOADABLE and error.get("file"):  # the test's own hint would be beside the point
        said = f"`{error['file']}` does not load, so this could not run: {error['type']}: {error['message']}"
        return f"{case.what}: {said}\n    hint:     {UNLOADABLE_HINT}"
    if not error.get("where") and error["type"] not in UNLOADABLE:
        return _not_raised_by_student(case, program, error)
    unmet = course_api.unmet(error["type"], str(error["message"]))
    plain_number = course_api.plain_number_hint(error["type"], str(error["message"]))
    return (
        f"{case.what}: your code raised {error['type']}: {error['message'] or '(no message)'}{_where(error)}\n"
        f"    while running: {program.shown}\n"
        f"    inputs:   {_inputs(case, program)}\n"
        f"    hint:     {unmet or plain_number or program.hint or case.hint}"
    )


def _not_raised_by_student(case: Case, program: Program, error: dict) -> str:
    """An error raised while no line of the student's code ran: Python found no operator, or
    the grader could not set or use an attribute. It names the course's requirement when the
    shared table knows it, and never says "your code raised"."""
    unmet = course_api.unmet(error["type"], str(error["message"]))
    if closure := _backward_with_arguments(error["type"], str(error["message"])):
        unmet = (
            f"the course calls `_backward()` with no arguments, and `{closure.split('.<locals>.')[0]}`'s "
            f"`_backward` takes some ({error['type']}: {error['message']})"
        )
    hint = "the course API (see the docstrings of the release) needs it" if unmet else program.hint or case.hint
    said = unmet or f"{error['type']}: {error['message'] or '(no message)'}, raised outside your code"
    return (
        f"{case.what}: {said}\n"
        f"    while running: {program.shown}\n"
        f"    inputs:   {_inputs(case, program)}\n"
        f"    hint:     {hint}"
    )


def judge(case: Case, reference: list[Outcome], submission: list[Outcome]) -> None:
    """Raise `GradeFailure` for the first (smallest) program whose reads differ."""
    for program, want, got in zip(case.programs, reference, submission):
        if want.error is not None:
            raise GraderError(f"the reference failed {case.id}: {want.error}")
        if (slow := over_limit(case, program, got)) is not None:
            raise slow
        if got.error is not None:
            raise GradeFailure(explain_error(case, program, got.error), cause_of_error(program, got.error))
        if case.check is not None:
            problem = case.check(_said(got.out), want.out)
            if problem:
                hint = program.hint or case.hint
                raise GradeFailure(
                    f"{case.what}: {problem}\n    while running: {program.shown}\n    hint:     {hint}",
                    of_wrong_result(program.steps, "gradient" in problem),
                )
            continue
        if len(got.out) != len(want.out):
            raise GradeFailure(
                f"{case.what}: the program returned {len(got.out)} results, expected {len(want.out)}",
                of_wrong_result(program.steps, False),
            )
        for label, g, w in zip(program.labels, got.out, want.out):
            if not close(g, w, case.rtol, case.atol):
                raise GradeFailure(difference(case, program, label, g, w), _wrong_result(case, program, label, g))


def over_limit(case: Case, program: Program, got: Outcome) -> GradeFailure | None:
    """A measured program (cases.measured) whose child used more CPU than its limit, as the
    parent counted it; whether it answered or was stopped at its deadline, that is its failure."""
    limit = measured(program.steps)
    if limit is None or got.cpu is None or got.cpu <= limit["limit"]:
        return None
    stopped = got.error is not None
    return GradeFailure(
        f"{case.what}: {limit['what']} took {'more than ' * stopped}{got.cpu:.1f} s of CPU, expected at most "
        f"{limit['limit']:g} s (counted by the grader over the whole process that ran it, imports included"
        f"{'; it was stopped there' * stopped})\n"
        f"    while running: {program.shown}\n"
        f"    hint:     {program.hint or case.hint}",
        of_wrong_result(program.steps, False),
    )


def _wrong_result(case: Case, program: Program, label: str, got: object) -> Cause:
    """A wrong number's cause (root_cause.py's steps 2 and 3); a Value of parts 1-3 that answers
    with an object where the course's holds a number (a NumPy array) fails the course's `data`."""
    held = _non_number(got)
    if case.part in SCALAR_PARTS and held not in (None, "Value"):
        return Cause("Value.data", f" holds a {untrusted(held)}, not one number")
    cause = of_wrong_result(program.steps, "gradient" in label)
    if isinstance(got, str) and any(isinstance(s, list) and s[:1] == ["error"] for s in program.steps):
        return replace(cause, detail=f"raised {untrusted(got)}")  # the API probe saw where (root_cause.through)
    return cause


def _non_number(got: object) -> str | None:
    """The type name of the first object among the answers that is not a number."""
    if isinstance(got, list):
        return next((found for g in got if (found := _non_number(g))), None)
    return got["not_a_number"] if isinstance(got, dict) and set(got) == {"not_a_number"} else None


def cause_of_error(program: Program, error: dict) -> Cause:
    """Where an error starts (root_cause.py's step 1): a file that does not load, a requirement
    of the course the code does not meet, a name the grader needs, the innermost student frame;
    an error with none of these (a time-out) is grouped as a wrong result is."""
    kind, message = error["type"], str(error["message"])
    file, line = error.get("file"), error.get("line")
    if kind in UNLOADABLE and file:
        said = re.sub(r" \(\w+\.py, line \d+\)$", "", untrusted(message))
        code = f"\n    {untrusted(error['code'])}" if error.get("code") else ""
        return Cause(file, " does not load", file, line, f"{file}, line {line}: {kind}: {said}{code}", loads=False)
    if requirement := course_api.requirement(kind, message):
        return Cause(*requirement)
    if kind == notes.NEEDS:
        return Cause(untrusted(message), " is missing")
    if name := notes.called_but_missing(error):
        return Cause(name, " is missing")
    if closure := _backward_with_arguments(kind, message):
        return replace(of_function(closure, None, None), said=SIGNATURE)
    if hung := hang_report.hung_in(error):
        return of_function(*hung, program.steps)
    if error.get("function"):
        return of_function(error["function"], file, line, program.steps)
    return of_wrong_result(program.steps, False)


SIGNATURE_ERROR = re.compile(
    r"((?:[\w<>]+\.)*_backward)\(\) (?:missing \d+ required positional arguments?: .*"
    r"|takes \d+ positional arguments? but \d+ (?:was|were) given)"
)


def _backward_with_arguments(kind: str, message: str) -> str | None:
    """`Value.__mul__.<locals>._backward` when a `_backward` was called with no arguments and
    needs some: the course (the grader's own walk, and the student's backward() as the lessons
    write it) calls `_backward()` with none."""
    found = SIGNATURE_ERROR.fullmatch(message) if kind == "TypeError" else None
    return found[1] if found else None


def _said(answer: object) -> object:
    """The child's answer with each string made one visible line, for a suite's own check,
    which may quote it: an honest answer is unchanged, a forged one cannot add lines."""
    if isinstance(answer, list):
        return [_said(item) for item in answer]
    if isinstance(answer, dict):
        return {untrusted(key): _said(value) for key, value in answer.items()}
    return untrusted(answer) if isinstance(answer, str) else answer


def difference(case: Case, program: Program, label: str, got: object, want: object) -> str:
    """One read that differs, in words. For an answer holding arrays (one array, or a list of
    them) the first line also says where: the first array that differs, then its shape or its
    first differing element (unless the case is secret), and small arrays are shown whole."""
    headline, expected, shown = label, repr(want), plain(got)
    if _holds_arrays(want):
        expected, shown = _array_words(want), _array_words(got)
        if not case.secret:
            headline = f"{label}: {_where_differs(got, want, case.rtol, case.atol)}"
    return (
        f"{case.what}: {headline}\n"
        f"    while running: {program.shown}\n"
        f"    inputs:   {_inputs(case, program)}\n"
        f"    expected: {'(hidden)' if case.secret else expected}\n"
        f"    got:      {shown}\n"
        f"    hint:     {program.hint or case.hint}"
    )


def _holds_arrays(want: object) -> bool:
    return is_array(want) or isinstance(want, list) and any(_holds_arrays(w) for w in want)


def _where_differs(got: object, want: object, rtol: float, atol: float) -> str:
    """The path to the first array that differs ("[2] " in a list of parameters), then how it
    differs: its shape first, then its first differing element, "at [1, 0]: expected 0.5, got 0.25"."""
    if is_array(want) and is_array(got) and got["shape"] != want["shape"]:
        return f"expected shape {_shape(want['shape'])}, got {_shape(got['shape'])}"
    if is_array(want) and is_array(got):
        index, g, w = next(_differences(got["values"], want["values"], rtol, atol, []))
        return f"{f'at {index}: ' if index else ''}expected {_words(w)}, got {_trimmed(_words(g))}"
    if is_array(want):
        return f"expected an array of shape {_shape(want['shape'])}, got {_array_words(got)}"
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        i = next(i for i, (g, w) in enumerate(zip(got, want)) if not close(g, w, rtol, atol))
        return f"[{i}] {_where_differs(got[i], want[i], rtol, atol)}"
    return f"expected {_array_words(want)}, got {_array_words(got)}"


def _differences(got: object, want: object, rtol: float, atol: float, index: list[int]) -> Iterator[tuple]:
    """(index, got, want) of every element that differs, in row-major order (as `close` compares)."""
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):
            yield from _differences(g, w, rtol, atol, [*index, i])
    elif not close(got, want, rtol, atol):
        yield index, got, want


def _shape(shape: list[int]) -> str:
    """As NumPy writes a shape: (3, 1), (3,) or ()."""
    return str(tuple(shape))


def _array_words(answer: object) -> str:
    """Small arrays whole, as nested lists; large ones by their shape; anything else in words."""
    return _trimmed(_shown(answer))


def _shown(answer: object) -> str:
    if is_array(answer):
        if math.prod(answer["shape"]) > ARRAY_SHOWN:
            return f"an array of shape {_shape(answer['shape'])}"
        return _words(answer["values"])
    if isinstance(answer, list):
        return "[" + ", ".join(_shown(a) for a in answer) + "]"
    return _words(answer)
