"""Failure messages that teach: what was checked, the inputs, expected, got, and a hint."""

from __future__ import annotations

import math


class CheckFailure(AssertionError):
    """A check that ran and disagreed; its message is shown to the student as is."""


class Unanswered(CheckFailure):
    """A quiz answer not written yet: like a hole not filled, not attempted (a run where
    nothing is attempted tells the student where to begin)."""


def describe(inputs: dict[str, object]) -> str:
    return ", ".join(f"{name} = {value!r}" for name, value in inputs.items())


def fail(
    what: str,
    inputs: dict[str, object],
    expected: object,
    got: object,
    hint: str,
    where: str = "",
    kind: type[CheckFailure] = CheckFailure,
) -> None:
    """Raise the failure (a `kind`): what was checked, the inputs, expected, got, where in the
    student's code the value came from (a wrong value names its function and line, as a crash
    does), and the hint."""
    shown_inputs = f"    inputs:   {describe(inputs)}\n" if inputs else ""
    shown_where = f"    where:    {where}\n" if where else ""
    raise kind(
        f"{what}\n{shown_inputs}    expected: {expected!r}\n    got:      {got!r}\n{shown_where}    hint:     {hint}"
    )


def close(got: object, want: float, rtol: float = 1e-6, atol: float = 1e-9) -> bool:
    """|got - want| <= atol + rtol * |want|, and `got` must be a real finite number."""
    if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got):
        return False
    return abs(got - want) <= atol + rtol * abs(want)


def expect_close(
    got: object,
    want: float,
    *,
    what: str,
    inputs: dict[str, object],
    hint: str,
    rtol: float = 1e-6,
    atol: float = 1e-9,
    where: str = "",
) -> None:
    if not close(got, want, rtol, atol):
        fail(what, inputs, want, got, hint, where)


def expect_raises(
    error: type[Exception], action, *, what: str, inputs: dict[str, object], hint: str, where: str = ""
) -> None:
    """`action()` must raise `error` (NotImplementedError passes through as "not attempted")."""
    try:
        result = action()
    except error:
        return
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - any other exception is the wrong answer
        fail(what, inputs, f"{error.__name__}", f"{type(exc).__name__}: {exc}", hint, where)
    fail(what, inputs, f"{error.__name__}", f"no error, returned {result!r}", hint, where)
